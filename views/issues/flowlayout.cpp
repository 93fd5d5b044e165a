#include "views/issues/flowlayout.h"

#include <QStyle>
#include <QWidget>
#include <algorithm>

namespace rankscope {

FlowLayout::FlowLayout(QWidget* parent) : QLayout(parent) {}

FlowLayout::~FlowLayout()
{
    qDeleteAll(m_items);
}

void FlowLayout::addItem(QLayoutItem* item)
{
    m_items.append(item);
    invalidate();
}

QLayoutItem* FlowLayout::takeAt(int index)
{
    if (index < 0 || index >= m_items.size()) return nullptr;
    QLayoutItem* item = m_items.takeAt(index);
    invalidate();
    return item;
}

int FlowLayout::heightForWidth(int width) const
{
    return layOut({0, 0, width, 0}, false);
}

QSize FlowLayout::sizeHint() const
{
    int width = 0, height = 0, shown = 0;
    for (const QLayoutItem* item : m_items) {
        if (item->isEmpty()) continue;
        width += item->sizeHint().width();
        height = std::max(height, item->sizeHint().height());
        ++shown;
    }
    const QMargins m = contentsMargins();
    return {width + std::max(0, shown - 1) * gap(Qt::Horizontal) + m.left() + m.right(),
            height + m.top() + m.bottom()};
}

QSize FlowLayout::minimumSize() const
{
    QSize size;
    for (const QLayoutItem* item : m_items)
        if (!item->isEmpty()) size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size.grownBy(m);
}

void FlowLayout::setGeometry(const QRect& rect)
{
    QLayout::setGeometry(rect);
    layOut(rect, true);
}

int FlowLayout::gap(Qt::Orientation orientation) const
{
    if (spacing() >= 0) return spacing();
    // Styles without a layout spacing metric space controls by their types.
    const QWidget* w = parentWidget();
    return w ? std::max(0, w->style()->layoutSpacing(QSizePolicy::DefaultType,
                                                     QSizePolicy::DefaultType, orientation, nullptr,
                                                     w))
             : 0;
}

int FlowLayout::layOut(const QRect& rect, bool place) const
{
    const QMargins m = contentsMargins();
    const QRect area = rect.marginsRemoved(m);
    const int across = gap(Qt::Horizontal), down = gap(Qt::Vertical);
    int x = area.left(), y = area.top(), lineHeight = 0;
    for (QLayoutItem* item : m_items) {
        if (item->isEmpty()) continue; // a hidden widget takes no room
        const QSize hint = item->sizeHint();
        const int width =
            std::max(item->minimumSize().width(), std::min(hint.width(), area.width()));
        if (x > area.left() && x + width > area.left() + area.width()) {
            x = area.left();
            y += lineHeight + down;
            lineHeight = 0;
        }
        if (place) item->setGeometry({x, y, width, hint.height()});
        x += width + across;
        lineHeight = std::max(lineHeight, hint.height());
    }
    return y + lineHeight - rect.top() + m.bottom();
}

} // namespace rankscope
