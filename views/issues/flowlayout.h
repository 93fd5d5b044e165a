#pragma once

#include <QLayout>
#include <QList>

namespace rankscope {

// Lays its items out left to right at their preferred widths and starts a new line where the
// next one would not fit, so that a row of controls wraps instead of being cut off when its
// parent narrows. An item wider than a whole line gets the line (never less than its minimum).
// Its height follows its width (heightForWidth), which the box layouts honour.
class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr);
    ~FlowLayout() override;

    void addItem(QLayoutItem* item) override;
    int count() const override { return int(m_items.size()); }
    QLayoutItem* itemAt(int index) const override { return m_items.value(index); }
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override { return {}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;    // every item on one line
    QSize minimumSize() const override; // the widest item's minimum; one line high
    void setGeometry(const QRect& rect) override;

private:
    int gap(Qt::Orientation orientation) const;
    // Places the items in `rect`, or only measures when `place` is false; returns the height.
    int layOut(const QRect& rect, bool place) const;

    QList<QLayoutItem*> m_items;
};

} // namespace rankscope
