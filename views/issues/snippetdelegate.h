#pragma once

#include <QStyledItemDelegate>

namespace rankscope {

// Draws a cell's HTML (IssueTableModel::SnippetHtmlRole) on one elided line, so the matched
// words of a search stand out in bold.
class SnippetDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit SnippetDelegate(int htmlRole, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;

private:
    int m_htmlRole;
};

} // namespace rankscope
