#include "views/logviewer/logviewer.h"

#include "views/counttext.h"
#include "views/logviewer/loglinesmodel.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListView>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <utility>

namespace rankscope {

namespace {

// The lines are of uniform height, so the view asks the size of its first row alone and would
// cut every longer line to the first's width; the widest line gives the width instead.
class WidestLineDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        const auto* lines = static_cast<const LogLinesModel*>(index.model());
        const int widest = lines->widestRow();
        return QStyledItemDelegate::sizeHint(option, widest >= 0 ? lines->index(widest) : index);
    }
};

// The row of `log` that `e` cites, -1 when it cites none there.
int citedRow(const Evidence& e, const RankLog& log)
{
    if (QString::fromStdString(e.path) != log.sourcePath) return -1;
    // A combined log is split per rank; a citation names the rank it was read from.
    if (e.rank >= 0 && log.rank && *log.rank != e.rank) return -1;
    return log.indexOfLineNumber(e.line);
}

} // namespace

LogViewer::LogViewer(QWidget* parent) : QWidget(parent), m_model(new LogLinesModel(this))
{
    m_logBox = new QComboBox(this);
    m_logBox->setObjectName(QStringLiteral("logBox"));
    m_logBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_logBox->setMinimumContentsLength(24);
    m_prev = new QPushButton(tr("Previous cited"), this);
    m_prev->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
    m_next = new QPushButton(tr("Next cited"), this);
    m_next->setShortcut(QKeySequence(Qt::Key_F3));
    m_status = new QLabel(this);
    m_view = new QListView(this);
    m_view->setObjectName(QStringLiteral("logLines"));
    m_view->setModel(m_model);
    m_view->setUniformItemSizes(true);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_view->setItemDelegate(new WidestLineDelegate(m_view));

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_logBox, 1);
    bar->addWidget(m_prev);
    bar->addWidget(m_next);
    bar->addWidget(m_status);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_prev, &QPushButton::clicked, this, &LogViewer::previousCited);
    connect(m_next, &QPushButton::clicked, this, &LogViewer::nextCited);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this] { updateStatus(); });
    connect(m_logBox, &QComboBox::activated, this, [this](int i) {
        m_logPicked = true;
        showLog(i);
    });
    updateStatus();
}

void LogViewer::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_citations.clear();
    m_logsWithCitations = false;
    m_logPicked = false;
    m_logIndex = -1;
    m_model->setLog(nullptr, {});
    m_logBox->clear();
    if (m_session)
        for (int i = 0; i < int(m_session->logs.size()); ++i)
            m_logBox->addItem(logTitle(i));
    if (m_session && !m_session->logs.empty()) showLog(0);
    updateStatus();
}

void LogViewer::setCitations(const std::vector<Evidence>& evidence)
{
    m_citations.clear();
    for (const Evidence& e : evidence)
        if (e.line > 0) m_citations.push_back(e);
    m_logsWithCitations = false;
    if (m_session)
        for (int i = 0; i < int(m_session->logs.size()); ++i) {
            // The logs with cited lines say so in the list, so the cited log is found from any.
            const qsizetype cited = citedRowsOf(m_session->logs[std::size_t(i)]).size();
            m_logsWithCitations = m_logsWithCitations || cited > 0;
            m_logBox->setItemText(i, cited > 0
                                         ? tr("%1 (%n cited)", nullptr, int(cited)).arg(logTitle(i))
                                         : logTitle(i));
        }
    // Until the reader picks a log, the one shown is that of the first cited line, at that line,
    // as Evidence opens it; a picked log stays.
    int firstLog = -1, firstRow = -1;
    if (m_session && !m_logPicked)
        for (std::size_t c = 0; c < m_citations.size() && firstLog < 0; ++c)
            for (int i = 0; i < int(m_session->logs.size()) && firstLog < 0; ++i)
                if (const int row = citedRow(m_citations[c], m_session->logs[std::size_t(i)]);
                    row >= 0) {
                    firstLog = i;
                    firstRow = row;
                }
    if (firstLog >= 0) {
        showLog(firstLog);
        goToRow(firstRow);
        return;
    }
    showLog(m_logIndex);
    // In a picked log the reader's place is kept; where there is none yet, the first cited
    // line is it.
    if (!m_view->currentIndex().isValid() && !m_citedRows.isEmpty()) goToRow(m_citedRows.first());
}

QString LogViewer::logTitle(int logIndex) const
{
    const RankLog& log = m_session->logs[std::size_t(logIndex)];
    return log.rank ? tr("rank %1: %2").arg(*log.rank).arg(log.sourcePath) : log.sourcePath;
}

QList<int> LogViewer::citedRowsOf(const RankLog& log) const
{
    QList<int> rows;
    for (const Evidence& e : m_citations)
        if (const int row = citedRow(e, log); row >= 0) rows.append(row);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

bool LogViewer::openAt(const QString& path, int line, int rank)
{
    if (!m_session) return false;
    const auto& logs = m_session->logs;
    int fallback = -1;
    for (int i = 0; i < int(logs.size()); ++i) {
        const RankLog& log = logs[std::size_t(i)];
        if (log.sourcePath != path || log.indexOfLineNumber(line) < 0) continue;
        if (rank < 0 || (log.rank && *log.rank == rank)) {
            fallback = i;
            break;
        }
        if (fallback < 0) fallback = i;
    }
    if (fallback < 0) return false;
    showLog(fallback);
    goToRow(logs[std::size_t(fallback)].indexOfLineNumber(line));
    return true;
}

const RankLog* LogViewer::currentLog() const
{
    return m_model->log();
}

int LogViewer::currentLineNumber() const
{
    const QModelIndex current = m_view->currentIndex();
    return current.isValid() ? current.data(LogLinesModel::LineNumberRole).toInt() : -1;
}

bool LogViewer::isHighlighted(int lineNumber) const
{
    return m_model->isCited(lineNumber);
}

QList<int> LogViewer::citedLineNumbers() const
{
    QList<int> numbers;
    for (int row : m_citedRows)
        numbers << m_model->log()->lineNumber(row);
    return numbers;
}

void LogViewer::nextCited()
{
    const int row = m_view->currentIndex().isValid() ? m_view->currentIndex().row() : -1;
    const auto it = std::upper_bound(m_citedRows.begin(), m_citedRows.end(), row);
    if (it != m_citedRows.end()) goToRow(*it);
}

void LogViewer::previousCited()
{
    const int row =
        m_view->currentIndex().isValid() ? m_view->currentIndex().row() : m_model->rowCount();
    const auto it = std::lower_bound(m_citedRows.begin(), m_citedRows.end(), row);
    if (it != m_citedRows.begin()) goToRow(*std::prev(it));
}

void LogViewer::showLog(int logIndex)
{
    if (!m_session || logIndex < 0 || logIndex >= int(m_session->logs.size())) return;
    const RankLog& log = m_session->logs[std::size_t(logIndex)];
    m_citedRows = citedRowsOf(log);
    QSet<int> cited;
    for (int row : m_citedRows)
        cited.insert(log.lineNumber(row));
    if (logIndex != m_logIndex || m_model->log() != &log) {
        m_logIndex = logIndex;
        m_model->setLog(&log, std::move(cited));
    } else {
        m_model->setCited(std::move(cited));
    }
    m_logBox->setCurrentIndex(logIndex);
    updateStatus();
}

void LogViewer::goToRow(int row)
{
    const QModelIndex index = m_model->index(row);
    if (!index.isValid()) return;
    m_view->setCurrentIndex(index);
    m_view->scrollTo(index, QAbstractItemView::PositionAtCenter);
    m_centerOnShow = !m_view->isVisible();
    updateStatus();
}

void LogViewer::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // A finding selected while the tab was hidden: its line is centred at the size shown, once
    // the view has laid its rows out at that size (queued: the show is still being laid out).
    if (std::exchange(m_centerOnShow, false))
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_view->currentIndex().isValid())
                    m_view->scrollTo(m_view->currentIndex(), QAbstractItemView::PositionAtCenter);
            },
            Qt::QueuedConnection);
}

void LogViewer::updateStatus()
{
    const int row = m_view->currentIndex().isValid() ? m_view->currentIndex().row() : -1;
    const int at =
        int(std::find(m_citedRows.begin(), m_citedRows.end(), row) - m_citedRows.begin());
    m_prev->setEnabled(!m_citedRows.isEmpty() && m_citedRows.first() < (row < 0 ? INT_MAX : row));
    m_next->setEnabled(!m_citedRows.isEmpty() && m_citedRows.last() > row);
    if (!m_session || m_session->logs.empty())
        m_status->setText(tr("No logs in this folder"));
    else if (m_citedRows.isEmpty() && m_logsWithCitations)
        m_status->setText(tr("No cited lines here: see the logs marked \"cited\""));
    else if (m_citedRows.isEmpty())
        m_status->setText(tr("No cited lines in this log"));
    else if (at < int(m_citedRows.size()))
        m_status->setText(tr("cited line %1 of %2").arg(at + 1).arg(m_citedRows.size()));
    else
        m_status->setText(
            countText(qsizetype(m_citedRows.size()), tr("%1 cited line"), tr("%1 cited lines")));
}

} // namespace rankscope
