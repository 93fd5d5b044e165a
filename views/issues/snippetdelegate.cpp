#include "views/issues/snippetdelegate.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QPainter>
#include <QTextDocument>

namespace rankscope {

SnippetDelegate::SnippetDelegate(int htmlRole, QObject* parent)
    : QStyledItemDelegate(parent), m_htmlRole(htmlRole)
{}

void SnippetDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const
{
    const QString html = index.data(m_htmlRole).toString();
    if (html.isEmpty()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    opt.text.clear();
    QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);

    QTextDocument doc;
    doc.setDefaultFont(opt.font);
    doc.setDocumentMargin(0);
    doc.setHtml(html);
    const QRect text = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, opt.widget);
    QAbstractTextDocumentLayout::PaintContext ctx;
    ctx.palette = opt.palette;
    ctx.palette.setColor(QPalette::Text, opt.state & QStyle::State_Selected
                                             ? opt.palette.color(QPalette::HighlightedText)
                                             : opt.palette.color(QPalette::Text));
    painter->save();
    painter->setClipRect(text);
    painter->translate(text.left(), text.top() + (text.height() - doc.size().height()) / 2);
    doc.documentLayout()->draw(painter, ctx);
    painter->restore();
}

} // namespace rankscope
