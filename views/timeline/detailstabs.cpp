#include "views/timeline/detailstabs.h"

#include <QHBoxLayout>
#include <QPainter>
#include <QTabBar>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QToolButton>
#include <algorithm>

namespace rankscope {

// One line of text, elided at the right end; the tooltip holds the whole text.
class SummaryLine : public QWidget {
public:
    explicit SummaryLine(QWidget* parent) : QWidget(parent)
    {
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    void setText(const QString& text)
    {
        m_text = text;
        setToolTip(text);
        updateGeometry();
        update();
    }
    QString text() const { return m_text; }
    QSize sizeHint() const override
    {
        return {fontMetrics().horizontalAdvance(m_text), fontMetrics().height()};
    }
    QSize minimumSizeHint() const override { return {0, fontMetrics().height()}; }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(rect(), Qt::AlignVCenter | Qt::AlignLeft,
                   fontMetrics().elidedText(m_text, Qt::ElideRight, width()));
    }

private:
    QString m_text;
};

// Beside the tabs: the summary and the toggle. The tab widget gives a corner widget the width of
// its size hint even where the tabs then lose theirs, so the hint is the width the tabs leave.
class DetailsCorner : public QWidget {
public:
    explicit DetailsCorner(QTabWidget* tabs) : QWidget(tabs), m_tabs(tabs) {}
    QSize sizeHint() const override
    {
        const QSize own = layout()->sizeHint();
        const int room = m_tabs->width() - m_tabs->tabBar()->sizeHint().width();
        return {std::clamp(room, layout()->minimumSize().width(), own.width()), own.height()};
    }

private:
    QTabWidget* m_tabs;
};

namespace {

// The document's text on one line: its paragraphs, and a table's rows with their cells side by
// side, joined by " · ".
QString oneLine(const QTextDocument& doc)
{
    QStringList parts;
    for (auto it = doc.rootFrame()->begin(); !it.atEnd(); ++it) {
        if (auto* table = qobject_cast<QTextTable*>(it.currentFrame())) {
            for (int row = 0; row < table->rows(); ++row) {
                QStringList cells;
                for (int column = 0; column < table->columns(); ++column) {
                    const QTextTableCell cell = table->cellAt(row, column);
                    QTextCursor c = cell.firstCursorPosition();
                    c.setPosition(cell.lastCursorPosition().position(), QTextCursor::KeepAnchor);
                    if (const QString text = c.selectedText().simplified(); !text.isEmpty())
                        cells << text;
                }
                if (!cells.isEmpty()) parts << cells.join(QLatin1Char(' '));
            }
        } else if (const QString text = it.currentBlock().text().simplified(); !text.isEmpty()) {
            parts << text;
        }
    }
    return parts.join(QStringLiteral(" · "));
}

} // namespace

DetailsTabs::DetailsTabs(QWidget* parent) : QTabWidget(parent)
{
    setDocumentMode(true);
    auto* corner = new DetailsCorner(this);
    auto* row = new QHBoxLayout(corner);
    row->setContentsMargins(8, 0, 2, 0);
    m_summary = new SummaryLine(corner);
    m_summary->setObjectName(QStringLiteral("detailsSummary"));
    m_toggle = new QToolButton(corner);
    m_toggle->setObjectName(QStringLiteral("detailsToggle"));
    m_toggle->setText(tr("Details pane"));
    m_toggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_toggle->setAutoRaise(true);
    m_toggle->setCheckable(true);
    m_toggle->setFocusPolicy(Qt::StrongFocus);
    m_toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    m_toggle->setToolTip(tr("Show or hide the details and charts under the lanes (%1)")
                             .arg(m_toggle->shortcut().toString(QKeySequence::NativeText)));
    row->addWidget(m_summary, 1);
    row->addWidget(m_toggle);
    // The tab widget bounds the corner to the width its tabs leave: the summary elides there.
    setCornerWidget(corner, Qt::TopRightCorner);

    connect(m_toggle, &QToolButton::clicked, this,
            [this](bool checked) { setUserExpanded(checked); });
    // A click on any tab, the one shown included, is a wish to read it.
    connect(tabBar(), &QTabBar::tabBarClicked, this, [this](int index) {
        if (index >= 0) setUserExpanded(true);
    });
    // Raised from the keyboard or the program (View > Timeline Charts): a chart wants room.
    connect(this, &QTabWidget::currentChanged, this, [this](int index) {
        if (index > 0) setUserExpanded(true);
        refresh(isExpanded());
    });
    refresh(false);
}

void DetailsTabs::addPage(QWidget* page, const QString& label)
{
    // Not 0, which a layout reads as "no minimum set" and replaces by the page's own.
    page->setMinimumHeight(1);
    addTab(page, label);
}

void DetailsTabs::setHasSelection(bool hasSelection)
{
    if (hasSelection == m_hasSelection) return;
    const bool was = isExpanded();
    m_hasSelection = hasSelection;
    m_userExpanded.reset();
    refresh(was);
}

void DetailsTabs::setUserExpanded(bool expanded)
{
    const bool was = isExpanded();
    m_userExpanded = expanded;
    refresh(was);
}

int DetailsTabs::collapsedHeight() const
{
    return minimumSizeHint().height();
}

QString DetailsTabs::summary() const
{
    return m_summary->text();
}

bool DetailsTabs::isSummaryShown() const
{
    return !m_summary->isHidden();
}

void DetailsTabs::setSummaryFrom(const QTextDocument& doc)
{
    m_summary->setText(oneLine(doc));
}

void DetailsTabs::refresh(bool wasExpanded)
{
    const bool expanded = isExpanded();
    m_toggle->setChecked(expanded);
    // The arrow points where the pane's edge will go.
    m_toggle->setArrowType(expanded ? Qt::DownArrow : Qt::UpArrow);
    m_summary->setVisible(!expanded || currentIndex() > 0);
    if (expanded != wasExpanded) Q_EMIT expandedChanged(expanded);
}

} // namespace rankscope
