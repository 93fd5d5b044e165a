#include "views/timeline/timelinepanel.h"

#include "model/export/exportpath.h"
#include "views/charts/collectivechart.h"
#include "views/charts/rankbreakdownchart.h"
#include "views/counttext.h"
#include "views/findings/findingsmodel.h"
#include "views/timeline/detailstabs.h"
#include "views/timeline/rankoverview.h"
#include "views/timeline/timelineview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDataStream>
#include <QDateTime>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

namespace rankscope {

namespace {

// Enter / Shift+Enter in the find field step through the hits without leaving the field.
class FindEdit : public QLineEdit {
public:
    FindEdit(TimelineView* view, QWidget* parent) : QLineEdit(parent), m_view(view) {}

protected:
    void keyPressEvent(QKeyEvent* event) override
    {
        if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) {
            if (event->modifiers() & Qt::ShiftModifier)
                m_view->findPrevious();
            else
                m_view->findNext();
            return;
        }
        if (event->key() == Qt::Key_Escape) {
            m_view->setFocus();
            return;
        }
        QLineEdit::keyPressEvent(event);
    }

private:
    TimelineView* m_view;
};

const QString kHintSeparator = QStringLiteral(" · ");
const QString kHintMore = QStringLiteral(" …");

} // namespace

KeyHintLabel::KeyHintLabel(const QStringList& hints, QWidget* parent)
    : QWidget(parent), m_hints(hints)
{
    setToolTip(hints.join(QLatin1Char('\n')));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QString KeyHintLabel::joined(qsizetype count) const
{
    const QString text = m_hints.first(count).join(kHintSeparator);
    return count < m_hints.size() ? text + kHintMore : text;
}

QString KeyHintLabel::shownText() const
{
    const QFontMetrics fm = fontMetrics();
    for (qsizetype n = m_hints.size(); n > 0; --n) {
        const QString text = joined(n);
        if (fm.horizontalAdvance(text) <= width()) return text;
    }
    return {};
}

QSize KeyHintLabel::sizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    return {fm.horizontalAdvance(joined(m_hints.size())), fm.height()};
}

void KeyHintLabel::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setPen(palette().color(QPalette::Disabled, QPalette::WindowText));
    // Right-aligned, next to the view's right edge where the eye looks for help.
    p.drawText(rect(), Qt::AlignVCenter | Qt::AlignRight, shownText());
}

QList<TimelineBinding> TimelinePanel::bindings()
{
    // TimelineView's keyPressEvent and mouse and wheel handlers, and FindEdit::keyPressEvent
    // above, handle these; a binding added there belongs here.
    using P = TimelineBinding::Place;
    return {
        {P::View, tr("W / S"), tr("Zoom in / out (at the mouse pointer)"), tr("zoom")},
        {P::View, tr("A / D"), tr("Pan left / right"), tr("pan")},
        {P::View, tr("wheel"), tr("Zoom at the mouse pointer"), tr("zooms")},
        {P::View, tr("Shift+wheel"), tr("Scroll the ranks up / down"), tr("scrolls ranks")},
        {P::View, tr("drag"), tr("Pan, and scroll the ranks"), tr("pans")},
        {P::View, tr("Shift+drag"), tr("Measure a time range"), tr("measures")},
        {P::View, tr("click"), tr("Select an event"), tr("selects")},
        {P::View, tr("F"), tr("Fit the selection, or the whole trace"), tr("fits")},
        {P::View, tr("Ctrl+F"), tr("Find events by name"), tr("finds")},
        {P::View, tr("Enter / Shift+Enter"), tr("Next / previous find hit"),
         tr("next / previous hit")},
        {P::View, tr("Esc"), tr("Clear the selection"), tr("clears")},
        {P::View, tr("click a rank name"), tr("Fold / unfold the rank's lanes"), tr("folds it")},
        {P::View, tr("wheel over the names"), tr("Scroll the ranks up / down"), tr("scrolls")},
        {P::View, tr("click a marker"), tr("Select the marker's finding"), tr("shows its finding")},
        {P::View, tr("click / drag in the overview"), tr("Centre the view on that time"),
         tr("jumps")},
        // RankOverviewCanvas's mouse and key handlers, on the same tab above the lanes.
        {P::View, tr("click a rank row"),
         tr("Rank overview: show only that rank's lanes (again: every rank)"),
         tr("brushes a rank")},
        {P::View, tr("Shift+click a rank row"),
         tr("Rank overview: show the ranks from the last clicked row to this one"),
         tr("brushes a range")},
        {P::View, tr("Ctrl+click a rank row"), tr("Rank overview: add or remove that rank"),
         tr("adds / removes a rank")},
        {P::View, tr("drag down the rank numbers"),
         tr("Rank overview: show the ranks of the rows crossed"), tr("brushes ranks")},
        {P::View, tr("drag across the rank rows"),
         tr("Rank overview: show that time range in the lanes"), tr("brushes time")},
        {P::View, tr("Esc / click above the rows"), tr("Rank overview: show every rank again"),
         tr("shows all ranks")},
        {P::View, tr("Order box"),
         tr("Rank overview: sort the rows by rank or by lateness at collectives"),
         tr("sorts rows")},
        {P::FindField, tr("Enter / Shift+Enter"), tr("Next / previous hit"), tr("next / previous")},
        {P::FindField, tr("Esc"), tr("Back to the timeline"), tr("back to the timeline")},
    };
}

TimelinePanel::TimelinePanel(QWidget* parent) : QWidget(parent), m_view(new TimelineView(this))
{
    m_view->setObjectName(QStringLiteral("timelineView"));
    auto* toolbar = new QHBoxLayout;
    toolbar->setContentsMargins(4, 2, 4, 2);
    m_aligned = new QCheckBox(tr("Align clocks"), this);
    m_aligned->setChecked(true);
    m_aligned->setToolTip(tr("Apply each rank's clock offset; off shows raw timestamps"));
    m_aligned->setObjectName(QStringLiteral("timelineAlignClocks"));
    m_fit = new QPushButton(tr("Fit (F)"), this);
    m_fit->setObjectName(QStringLiteral("timelineFit"));
    m_export = new QPushButton(tr("Export…"), this);
    m_export->setObjectName(QStringLiteral("timelineExport"));
    QStringList viewHints, findHints;
    for (const TimelineBinding& b : bindings())
        (b.place == TimelineBinding::Place::View ? viewHints : findHints) << b.hintText();
    m_keyHints = new KeyHintLabel(viewHints, this);
    m_keyHints->setObjectName(QStringLiteral("timelineKeyHints"));
    m_jobBox = new QComboBox(this);
    m_jobBox->setObjectName(QStringLiteral("timelineJob"));
    m_jobBox->setToolTip(tr("The folder mixes the traces of several jobs: show one job on its "
                            "own time scale, or every job on one axis"));
    m_jobBox->hide();
    toolbar->addWidget(m_jobBox);
    toolbar->addWidget(m_aligned);
    toolbar->addWidget(m_fit);
    toolbar->addWidget(m_export);
    enableTraceControls();
    toolbar->addWidget(m_keyHints, 1);

    m_findBar = new QWidget(this);
    auto* findLayout = new QHBoxLayout(m_findBar);
    findLayout->setContentsMargins(4, 2, 4, 2);
    m_find = new FindEdit(m_view, m_findBar);
    m_find->setObjectName(QStringLiteral("timelineFind"));
    m_find->setPlaceholderText(
        tr("Find events by name (%1)").arg(findHints.join(QLatin1String(", "))));
    m_find->setClearButtonEnabled(true);
    m_findStatus = new QLabel(m_findBar);
    auto* close = new QPushButton(tr("Close"), m_findBar);
    findLayout->addWidget(new QLabel(tr("Find:"), m_findBar));
    findLayout->addWidget(m_find, 1);
    findLayout->addWidget(m_findStatus);
    findLayout->addWidget(close);
    m_findBar->hide();

    m_details = new QTextBrowser(this);
    m_details->setObjectName(QStringLiteral("timelineDetails"));

    m_breakdown = new RankBreakdownChart(this);
    m_breakdown->setObjectName(QStringLiteral("rankBreakdownChart"));
    m_collective = new CollectiveChart(this);
    m_collective->setObjectName(QStringLiteral("collectiveChart"));
    m_bottom = new DetailsTabs(this);
    m_bottom->setObjectName(QStringLiteral("timelineBottomTabs"));
    m_bottom->addPage(m_details, tr("Details"));
    m_bottom->addPage(m_breakdown, tr("Time per rank"));
    m_bottom->addPage(m_collective, tr("Collective by rank"));
    showDetails();

    m_overview = new RankOverview(m_view, this);
    m_overview->setObjectName(QStringLiteral("rankOverview"));
    // Beside the export button: the key hints beside it give it their room (they elide), so
    // nothing moves vertically when ranks are brushed.
    toolbar->insertWidget(toolbar->indexOf(m_keyHints), m_overview->showAllButton());
    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_splitter = splitter;
    splitter->addWidget(m_overview);
    splitter->addWidget(m_view);
    splitter->addWidget(m_bottom);
    splitter->setChildrenCollapsible(false);
    // The overview keeps the height sizeOverview gave its rows and the pane under the lanes the
    // height fitBottomPane gave it: a taller window goes to the lanes.
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    splitter->setStretchFactor(2, 0);
    splitter->setSizes(
        {fontMetrics().height() * 6, fontMetrics().height() * 50, m_bottom->collapsedHeight()});
    connect(m_bottom, &DetailsTabs::expandedChanged, this, &TimelinePanel::fitBottomPane);
    connect(m_bottom, &QTabWidget::currentChanged, this, [this] {
        // A chart raised in an unfolded pane of the details' height: the chart's height.
        if (m_bottom->isExpanded() && m_bottomHeight == 0) fitBottomPane();
    });
    connect(splitter, &QSplitter::splitterMoved, this, &TimelinePanel::bottomPaneDragged);
    connect(m_overview, &RankOverview::activityReady, this, [this] {
        m_overviewSized = false;
        sizeOverview();
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(toolbar);
    layout->addWidget(m_findBar);
    layout->addWidget(splitter, 1);

    connect(m_aligned, &QCheckBox::toggled, m_view, &TimelineView::setUseClockOffsets);
    connect(m_jobBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { showJob(index - 1); });
    connect(m_fit, &QPushButton::clicked, m_view, [this] {
        m_view->zoom().clearSelection();
        m_view->setVisibleRange(m_view->zoom().traceStartNs(), m_view->zoom().traceEndNs());
    });
    connect(m_export, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Timeline"), ExportPath::defaultPath(QStringLiteral("timeline.png")),
            tr("PNG images (*.png);;SVG drawings (*.svg)"));
        if (path.isEmpty()) return;
        const SessionPtr session = m_view->session();
        QString error = session ? ExportPath::refusal(path, session->folder.path()) : QString();
        const bool svg = path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive);
        if (error.isEmpty()) (svg ? exportSvg(path, &error) : exportPng(path, &error));
        if (!error.isEmpty()) QMessageBox::warning(this, tr("Export failed"), error);
    });
    connect(m_view, &TimelineView::findRequested, this, &TimelinePanel::showFindBar);
    connect(close, &QPushButton::clicked, this, [this] {
        m_find->clear();
        m_findBar->hide();
        m_view->setFocus();
    });
    connect(m_find, &QLineEdit::textChanged, m_view, &TimelineView::setFindText);
    connect(m_view, &TimelineView::findHitsChanged, this, &TimelinePanel::updateFindStatus);
    connect(m_view, &TimelineView::selectionChanged, this, &TimelinePanel::selectionChanged);
    connect(m_view, &TimelineView::detailsRead, this, &TimelinePanel::showDetails);
    connect(m_view, &TimelineView::clockChanged, this, [this] {
        showDetails();
        m_collective->setClock(m_view->clock());
        m_breakdown->setVisibleWindow(m_view->zoom().visibleStartNs(),
                                      m_view->zoom().visibleEndNs(), m_view->clock());
    });
    connect(m_view, &TimelineView::rangeChanged, this, [this](qint64 startNs, qint64 endNs) {
        m_breakdown->setVisibleWindow(startNs, endNs, m_view->clock());
    });
    connect(m_breakdown, &RankBreakdownChart::rankClicked, m_view, &TimelineView::selectRank);
    connect(m_collective, &CollectiveChart::collectiveClicked, this, [this](int rank, int record) {
        const SessionPtr s = m_view->session();
        if (s && record >= 0 && std::size_t(record) < s->events.collectives.size()) {
            const CollectiveRecord& c = s->events.collectives[std::size_t(record)];
            const TimelineEventRef ref{c.laneIndex, c.eventIndex};
            m_view->revealEvent(ref);
            if (m_view->selected() == ref) return;
        }
        m_view->selectRank(rank); // no event of it in the store: at least show the rank
    });
}

void TimelinePanel::setSession(SessionPtr session)
{
    // The previous folder's diagnosis no longer applies; this one's comes with setDiagnosis.
    m_view->setMarkers({});
    m_view->setClockOffsets({});
    m_view->setSession(session);
    m_overview->setSession(session);
    // Its rows would show every rank idle where no trace says what the ranks did.
    m_overview->setVisible(!session || !session->events.lanes.empty());
    enableTraceControls();
    {
        // One job at a time where the folder mixes them, the analysed one first.
        const QSignalBlocker quiet(m_jobBox);
        m_jobBox->clear();
        const LaneJobs& jobs = m_view->layout().laneJobs();
        m_jobBox->setVisible(jobs.mixed());
        if (jobs.mixed()) {
            m_jobBox->addItem(tr("Every job (%1, one time axis)").arg(jobs.jobCount));
            for (int j = 0; j < jobs.jobCount; ++j) {
                const TraceJob& job = jobs.jobs[std::size_t(j)];
                QStringList ranks;
                for (int r : job.ranks)
                    ranks << QString::number(r);
                QString text = (ranks.size() == 1 ? tr("Job %1: rank %2") : tr("Job %1: ranks %2"))
                                   .arg(j + 1)
                                   .arg(ranks.join(QLatin1String(", ")));
                if (job.worldSize > 0) text += tr(" of %1").arg(job.worldSize);
                if (job.firstNs >= 0)
                    text += QStringLiteral(" · ") +
                            QDateTime::fromMSecsSinceEpoch(job.firstNs / 1000000, Qt::UTC)
                                .toString(QStringLiteral("yyyy-MM-dd hh:mm"));
                if (j == jobs.analysed) text += tr(" (analysed)");
                m_jobBox->addItem(text);
            }
            m_jobBox->setCurrentIndex(jobs.analysed + 1);
        }
        showJob(jobs.mixed() ? jobs.analysed : -1);
    }
    showDetails();
    m_breakdown->setSession(session);
    m_breakdown->setVisibleWindow(m_view->zoom().visibleStartNs(), m_view->zoom().visibleEndNs(),
                                  m_view->clock());
    m_breakdown->setHighlightedRank(-1);
    m_collective->setClock(m_view->clock());
    m_collective->setSession(std::move(session));
    m_collective->setHighlight(-1, -1);
}

void TimelinePanel::setDiagnosis(const AnalysisResult& analysis)
{
    const QList<TimelineMarker> marks = FindingsModel::timelineMarkers(analysis);
    m_view->setClockOffsets(FindingsModel::timelineOffsets(analysis.clock));
    m_view->setMarkers(marks);
    m_overview->setDiagnosis(analysis, marks);
    m_overviewSized = false;
    sizeOverview();
    // The loader sets the diagnosis into the session the charts and the details were given
    // before it arrived: they read it again.
    m_breakdown->setSession(m_view->session());
    m_collective->setSession(m_view->session());
    selectionChanged();
}

void TimelinePanel::showJob(int job)
{
    if (m_jobBox->currentIndex() != job + 1 && job + 1 < m_jobBox->count()) {
        const QSignalBlocker quiet(m_jobBox);
        m_jobBox->setCurrentIndex(job + 1);
    }
    m_view->setShownJob(job);
    m_overview->setShownJob(job);
    m_overviewSized = false;
    sizeOverview();
}

void TimelinePanel::sizeOverview()
{
    // Every rank in the overview, up to 18 px a row, within 40 % of the tab's height; the
    // details and charts below their own height (folded: their tab row), the lanes the rest. A
    // session loaded while the tab is hidden is sized when the tab first gets its size.
    const QList<int> old = m_splitter->sizes();
    const int bottom = bottomPaneHeight();
    const int total = old[0] + old[1] + old[2] - bottom;
    const int least = fontMetrics().height() * 8;
    if (m_overviewSized || !isVisible() || total < 2 * least) return;
    const int overview =
        std::min(m_overview->preferredHeight(m_splitter->height() * 2 / 5), total - least);
    m_splitter->setSizes({overview, total - overview, bottom});
    m_overviewSized = true;
}

void TimelinePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    sizeOverview();
}

void TimelinePanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // After the layouts have given the splitter its shown size.
    QTimer::singleShot(0, this, &TimelinePanel::sizeOverview);
}

void TimelinePanel::showDetails()
{
    m_details->setHtml(m_view->selectionDetailsHtml());
    m_bottom->setSummaryFrom(*m_details->document());
    m_bottom->setHasSelection(m_view->selected().isValid() || m_view->selectedRank() >= 0);
}

int TimelinePanel::bottomPaneHeight() const
{
    if (!m_bottom->isExpanded()) return m_bottom->collapsedHeight();
    if (m_bottomHeight > 0) return m_bottomHeight;
    // Not sized by the user yet: the details' text as it wraps now, or what a chart's bars need,
    // within 40 % of the tab.
    const int line = fontMetrics().height();
    const int wanted = m_bottom->currentWidget() == m_details
                           ? m_bottom->collapsedHeight() +
                                 int(m_details->document()->size().height()) +
                                 2 * m_details->frameWidth() + line
                           : line * 18;
    const int least = m_bottom->collapsedHeight() + 4 * line;
    return std::clamp(wanted, least, std::max(least, m_splitter->height() * 2 / 5));
}

void TimelinePanel::fitBottomPane()
{
    QList<int> sizes = m_splitter->sizes();
    const int room = sizes[1] + sizes[2];
    // Before the first layout sizeOverview places the pane.
    if (!isVisible() || room <= 0) return;
    const int collapsed = m_bottom->collapsedHeight();
    const int bottom = std::clamp(bottomPaneHeight(), collapsed,
                                  std::max(collapsed, room - m_view->minimumHeight()));
    sizes[1] = room - bottom;
    sizes[2] = bottom;
    m_splitter->setSizes(sizes);
}

void TimelinePanel::bottomPaneDragged(int, int handle)
{
    if (handle != m_splitter->indexOf(m_bottom)) return; // the overview's handle
    const int height = m_splitter->sizes()[2];
    // Dragged down onto its tab row: folded. Dragged open: unfolded, and that height kept for
    // the next time it unfolds.
    if (height <= m_bottom->collapsedHeight() + fontMetrics().height()) {
        if (m_bottom->isExpanded()) m_bottom->setUserExpanded(false);
        return;
    }
    m_bottomHeight = height;
    if (!m_bottom->isExpanded()) m_bottom->setUserExpanded(true);
}

QByteArray TimelinePanel::saveState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << qint32(kStateVersion) << qint32(m_bottomHeight);
    return state;
}

void TimelinePanel::restoreState(const QByteArray& state)
{
    QDataStream in(state);
    qint32 version = 0, bottomHeight = 0;
    in >> version >> bottomHeight;
    if (in.status() != QDataStream::Ok || version != kStateVersion || bottomHeight < 0) return;
    m_bottomHeight = bottomHeight;
    fitBottomPane();
}

void TimelinePanel::selectionChanged()
{
    showDetails();
    const TimelineEventRef ref = m_view->selected();
    const SessionPtr s = m_view->session();
    const int rank =
        s && ref.isValid() ? s->events.lanes[std::size_t(ref.lane)].rank : m_view->selectedRank();
    m_breakdown->setHighlightedRank(rank);
    const std::vector<std::size_t> peers = m_view->selectedCollectivePeers();
    int record = -1;
    for (std::size_t p : peers) {
        const CollectiveRecord& c = s->events.collectives[p];
        if (c.laneIndex == ref.lane && c.eventIndex == ref.event) record = int(p);
    }
    if (!peers.empty()) m_collective->showRecord(peers.front());
    m_collective->setHighlight(rank, record);
}

void TimelinePanel::showCharts()
{
    m_bottom->setCurrentWidget(m_breakdown);
}

QImage TimelinePanel::exportedOverview() const
{
    return m_overview->canvas()->renderWhole(m_view->wholeTimelineZoom(),
                                             m_view->wholeTimelineLabelWidth());
}

void TimelinePanel::enableTraceControls()
{
    // An export of no trace once wrote a picture of "Ranks (0)" for a job of several ranks.
    const bool drawn = hasTrace();
    for (QWidget* control : {static_cast<QWidget*>(m_aligned), static_cast<QWidget*>(m_fit),
                             static_cast<QWidget*>(m_export)})
        control->setEnabled(drawn);
    m_export->setToolTip(drawn ? tr("The whole timeline, every rank and lane, as PNG or SVG")
                               : tr("No profiler trace to draw: nothing to export"));
}

bool TimelinePanel::hasTrace() const
{
    const SessionPtr session = m_view->session();
    return session && !session->events.lanes.empty();
}

bool TimelinePanel::exportPng(const QString& path, QString* error)
{
    return mayExport(error) && m_view->exportPng(path, error, exportedOverview());
}

bool TimelinePanel::exportSvg(const QString& path, QString* error)
{
    return mayExport(error) && m_view->exportSvg(path, error, exportedOverview());
}

bool TimelinePanel::mayExport(QString* error) const
{
    if (hasTrace()) return true;
    if (error) *error = tr("The folder holds no profiler trace: there is no timeline to export.");
    return false;
}

void TimelinePanel::showFindBar()
{
    m_findBar->show();
    m_find->setFocus();
    m_find->selectAll();
}

void TimelinePanel::updateFindStatus(int count, int current)
{
    QString status;
    if (m_find->text().isEmpty())
        status.clear();
    else if (m_view->isFinding() && count == 0)
        status = tr("searching…");
    else if (m_view->isFinding()) // the hits so far; more are coming
        status = current < 0
                     ? tr("%1, searching…").arg(countText(count, tr("%1 hit"), tr("%1 hits")))
                     : tr("%1 of %2, searching…").arg(current + 1).arg(count);
    else if (count == 0)
        status = tr("no match");
    else if (current < 0)
        status = countText(count, tr("%1 hit"), tr("%1 hits"));
    else
        status = tr("%1 of %2").arg(current + 1).arg(count);
    // One job of several shown: find looks in its lanes only (TimelineView::setFindText).
    const LaneJobs& jobs = m_view->layout().laneJobs();
    if (!status.isEmpty() && jobs.mixed() && jobs.shown >= 0)
        status += tr(" in job %1 (the job selector shows the others)").arg(jobs.shown + 1);
    // Ranks brushed on the overview: find looks in their lanes only.
    if (const int brushed = int(m_view->rankFilter().size()); !status.isEmpty() && brushed > 0)
        status += tr(" in the ranks brushed on the overview (%1)").arg(brushed);
    m_findStatus->setText(status);
}

} // namespace rankscope
