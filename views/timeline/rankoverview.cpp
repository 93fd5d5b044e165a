#include "views/timeline/rankoverview.h"

#include "model/analysis/collectivedetails.h"
#include "views/timeline/timelinecolors.h"
#include "views/timeline/timelineview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace rankscope {

namespace colors = timelinecolors;

namespace {

// A drag shorter than this is a click.
constexpr int kBrushMinPx = 4;

} // namespace

RankOverviewCanvas::RankOverviewCanvas(TimelineView* view, QWidget* parent)
    : QWidget(parent), m_view(view)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    setFocusPolicy(Qt::ClickFocus);
    setMinimumHeight(RankOverviewLayout::kMarkStripHeight + 8);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void RankOverviewCanvas::setActivity(ActivityPtr activity)
{
    m_activity = std::move(activity);
    invalidate();
}

void RankOverviewCanvas::setRanks(std::vector<int> ranks)
{
    m_layout.setRanks(std::move(ranks));
    // A brush follows the new order; ranks no longer shown leave it.
    std::vector<int> kept;
    for (int r : m_layout.ranks())
        if (std::find(m_selected.begin(), m_selected.end(), r) != m_selected.end())
            kept.push_back(r);
    setSelectedRanks(std::move(kept));
    invalidate();
}

void RankOverviewCanvas::setArrivals(std::vector<std::pair<int, std::int64_t>> arrivals)
{
    m_arrivals = std::move(arrivals);
    invalidate();
}

void RankOverviewCanvas::setHighlightedRank(int rank)
{
    m_highlightedRank = rank;
    invalidate();
}

void RankOverviewCanvas::setFindings(std::vector<char> crashed, std::vector<int> marked)
{
    m_crashed = std::move(crashed);
    m_layout.setEmphasised(std::move(marked));
    invalidate();
}

void RankOverviewCanvas::invalidate()
{
    ++m_version;
    update();
}

int RankOverviewCanvas::trackLeft() const
{
    // The view and this widget sit in one column, left edges aligned: the view's tracks begin
    // after its frame and its label column.
    return m_view->viewport()->x() + m_view->labelWidth();
}

RankState RankOverviewCanvas::stateAt(int rank, int x) const
{
    const std::vector<int>& ranks = m_layout.ranks();
    const auto it = std::find(ranks.begin(), ranks.end(), rank);
    if (it == ranks.end()) return RankState::Idle;
    return m_painter.stateAt(int(it - ranks.begin()), x - m_layout.trackLeft());
}

QImage RankOverviewCanvas::renderWhole(const ZoomState& zoom, int trackLeft) const
{
    if (!m_activity) return {};
    RankOverviewLayout layout;
    layout.setRanks(m_layout.ranks());
    layout.setEmphasised(m_layout.emphasised());
    const int ranks = int(m_layout.ranks().size());
    constexpr int kRowsPx = 400; // rows shorter than the tallest when the ranks are many
    layout.setHeight(
        layout.fittedHeight(RankOverviewLayout::kMarkStripHeight + std::max(ranks, kRowsPx)));
    layout.setTrackLeft(trackLeft);
    RankOverviewFrame frame = currentFrame();
    frame.zoom = zoom;
    frame.selected.clear();
    QImage image(trackLeft + zoom.widthPx(), layout.rowsBottom(), QImage::Format_RGB32);
    RankOverviewPainter painter;
    painter.paint(image, layout, frame, font());
    return image;
}

RankOverviewFrame RankOverviewCanvas::currentFrame() const
{
    RankOverviewFrame frame;
    frame.activity = m_activity.get();
    frame.zoom = m_view->zoom();
    frame.clock = m_view->clock();
    frame.crashed = m_crashed;
    frame.markers = m_view->markers();
    if (!m_view->useClockOffsets()) {
        const QHash<int, qint64> offsets = m_view->clockOffsets();
        for (auto it = offsets.begin(); it != offsets.end(); ++it)
            frame.markerShiftNs.insert(it.key(), -it.value());
    }
    frame.arrivals = m_arrivals;
    frame.highlightedRank = m_highlightedRank;
    const LaneJobs& jobs = m_view->layout().laneJobs();
    frame.analysedJob = jobs.analysed;
    frame.labelJobs = jobs.mixed() && jobs.shown < 0;
    frame.selected = m_selected;
    std::sort(frame.selected.begin(), frame.selected.end());
    return frame;
}

void RankOverviewCanvas::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    m_layout.setHeight(height());
}

void RankOverviewCanvas::paintEvent(QPaintEvent*)
{
    const ZoomState& zoom = m_view->zoom();
    m_layout.setTrackLeft(trackLeft());
    const CacheKey key{zoom.visibleStartNs(), zoom.visibleEndNs(), zoom.widthPx(), size(),
                       m_version};
    if (!(key == m_key) || m_image.size() != size()) {
        m_key = key;
        m_image = QImage(size(), QImage::Format_RGB32);
        m_painter.paint(m_image, m_layout, currentFrame(), font());
    }
    QPainter p(this);
    p.drawImage(0, 0, m_image);
    if (!m_activity) {
        p.setPen(QColor(90, 90, 100));
        p.drawText(rect().adjusted(m_layout.trackLeft() + 6, 0, 0, 0),
                   Qt::AlignVCenter | Qt::AlignLeft,
                   m_view->session() ? tr("Reading each rank's activity…")
                                     : tr("Open a trace folder to compare its ranks here."));
    }
    switch (brushTo(m_drag)) {
    case Brush::Time: {
        const int left = m_layout.trackLeft();
        const int a = std::max(left, std::min(m_press.x(), m_drag.x()));
        const int b = std::max(left, std::max(m_press.x(), m_drag.x()));
        p.fillRect(QRect(a, 0, b - a, height()), QColor(60, 90, 200, 60));
        p.setPen(QColor(60, 90, 200));
        p.drawRect(QRect(a, 0, b - a - 1, height() - 1));
        break;
    }
    case Brush::Ranks: {
        const int rowA =
            m_layout.rowAt(std::max(m_press.y(), RankOverviewLayout::kMarkStripHeight));
        const int rowB = m_layout.rowAt(std::clamp(m_drag.y(), RankOverviewLayout::kMarkStripHeight,
                                                   m_layout.rowsBottom() - 1));
        if (rowA < 0 || rowB < 0) break;
        const int top = m_layout.rowTop(std::min(rowA, rowB));
        const int bottom = m_layout.rowTop(std::max(rowA, rowB) + 1);
        p.fillRect(QRect(0, top, width(), bottom - top), QColor(60, 90, 200, 60));
        p.setPen(QColor(60, 90, 200));
        p.drawRect(QRect(0, top, width() - 1, bottom - top - 1));
        break;
    }
    case Brush::None:
        break;
    }
}

RankOverviewCanvas::Brush RankOverviewCanvas::brushTo(QPoint pos) const
{
    if (m_press.x() < 0 || pos.x() < 0) return Brush::None;
    const QPoint d = pos - m_press;
    if (std::max(std::abs(d.x()), std::abs(d.y())) < kBrushMinPx) return Brush::None;
    const bool fromNumbers = m_press.x() < m_layout.trackLeft();
    return fromNumbers || std::abs(d.y()) > std::abs(d.x()) ? Brush::Ranks : Brush::Time;
}

void RankOverviewCanvas::setSelectedRanks(std::vector<int> ranks)
{
    if (ranks == m_selected) return;
    m_selected = std::move(ranks);
    invalidate();
    Q_EMIT selectedRanksChanged(QList<int>(m_selected.begin(), m_selected.end()));
}

void RankOverviewCanvas::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) return;
    m_press = event->position().toPoint();
    m_drag = {-1, -1};
}

void RankOverviewCanvas::mouseMoveEvent(QMouseEvent* event)
{
    if (m_press.x() < 0) return;
    m_drag = event->position().toPoint();
    update();
}

void RankOverviewCanvas::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || m_press.x() < 0) return;
    const QPoint pos = event->position().toPoint();
    const QPoint press = m_press;
    const Brush brush = brushTo(pos);
    m_press = m_drag = {-1, -1};
    const int strip = RankOverviewLayout::kMarkStripHeight;
    if (brush == Brush::Time) {
        const int left = m_layout.trackLeft();
        const int a = std::max(left, std::min(pos.x(), press.x()));
        const int b = std::max(left, std::max(pos.x(), press.x()));
        const ZoomState& zoom = m_view->zoom();
        if (b > a) m_view->setVisibleRange(m_layout.timeForX(zoom, a), m_layout.timeForX(zoom, b));
    } else if (brush == Brush::Ranks) {
        const int bottom = m_layout.rowsBottom() - 1;
        const int rowA = m_layout.rowAt(std::clamp(press.y(), strip, bottom));
        const int rowB = m_layout.rowAt(std::clamp(pos.y(), strip, bottom));
        if (rowA >= 0 && rowB >= 0) {
            m_anchorRank = m_layout.rankAt(std::clamp(press.y(), strip, bottom));
            setSelectedRanks(m_layout.ranksInRows(rowA, rowB));
        }
    } else {
        clicked(pos, event->modifiers());
    }
    update();
}

void RankOverviewCanvas::clicked(QPoint pos, Qt::KeyboardModifiers modifiers)
{
    if (pos.y() < RankOverviewLayout::kMarkStripHeight) {
        setSelectedRanks({});
        return;
    }
    const int row = m_layout.rowAt(pos.y());
    if (row < 0) return;
    const std::vector<int> clickedRanks = m_layout.ranksInRows(row, row);
    std::vector<int> selection;
    const int anchorRow = m_layout.rowOfRank(m_anchorRank);
    if (modifiers & Qt::ShiftModifier && anchorRow >= 0) {
        selection = m_layout.ranksInRows(anchorRow, row);
    } else if (modifiers & Qt::ControlModifier) {
        // Toggle the row's ranks; the selection stays in display order.
        const auto has = [](const std::vector<int>& v, int r) {
            return std::find(v.begin(), v.end(), r) != v.end();
        };
        const bool add = !has(m_selected, clickedRanks.front());
        for (int r : m_layout.ranks())
            if (has(clickedRanks, r) ? add : has(m_selected, r)) selection.push_back(r);
        m_anchorRank = clickedRanks.front();
    } else {
        // A click on the only brushed row clears the brush; on another row brushes that row.
        selection = clickedRanks == m_selected ? std::vector<int>{} : clickedRanks;
        m_anchorRank = clickedRanks.front();
    }
    setSelectedRanks(std::move(selection));
}

void RankOverviewCanvas::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape && !m_selected.empty()) {
        setSelectedRanks({});
        return;
    }
    QWidget::keyPressEvent(event);
}

bool RankOverviewCanvas::event(QEvent* event)
{
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    const QPoint pos = static_cast<QHelpEvent*>(event)->pos();
    int rank = m_layout.rankAt(pos.y());
    if (rank < 0 || !m_activity) {
        QToolTip::hideText();
        return true;
    }
    const int key = rank;
    const LaneJobs& jobs = m_view->layout().laneJobs();
    rank = LaneJobs::rankOfKey(key);
    const int job = m_activity->rowOf(key) >= 0
                        ? m_activity->rows()[std::size_t(m_activity->rowOf(key))].job
                        : -1;
    const QString title = jobs.mixed() && job >= 0 ? tr("Job %1 · rank %2").arg(job + 1).arg(rank)
                                                   : m_view->layout().rankTitle(rank);
    const int shared = m_layout.ranksOfRow(m_layout.rowAt(pos.y())).second;
    QString text = shared > 1 ? tr("Ranks from %1 (%2 a pixel row)").arg(title).arg(shared) : title;
    if (pos.x() >= m_layout.trackLeft() && shared == 1) {
        const RankState state = stateAt(key, pos.x());
        text += QStringLiteral(": ") + colors::rankStateName(state);
        const SessionPtr session = m_view->session();
        if (state == RankState::HostBusy && session) {
            // What it is inside, on the rank's own clock.
            const std::int64_t raw =
                m_layout.timeForX(m_view->zoom(), pos.x()) - m_view->displayTimeNs(rank, 0);
            const RankActivity::OpenSpan open =
                RankActivity::openHostSpan(session->events, rank, raw, jobs, job);
            if (open.lane >= 0) {
                const Lane& lane = session->events.lanes[std::size_t(open.lane)];
                const auto e = std::size_t(open.event);
                text += QLatin1Char('\n') +
                        tr("In its own host code: inside %1 (%2 long), no kernel or collective "
                           "running")
                            .arg(QString::fromStdString(
                                     std::string(session->events.strings.view(lane.nameId[e]))),
                                 ZoomState::formatDuration(lane.endNs[e] - lane.startNs[e]));
            }
        }
    }
    // The row's latest rank, as the gutter colours the row.
    const auto [first, count] = m_layout.ranksOfRow(m_layout.rowAt(pos.y()));
    int latestKey = -1;
    std::int64_t latest = -1;
    for (int j = first; j < first + count; ++j) {
        const int k = m_layout.ranks()[std::size_t(j)];
        const std::int64_t excess = RankOverviewPainter::excessLatenessNs(*m_activity, k);
        if (excess > latest) {
            latest = excess;
            latestKey = k;
        }
    }
    if (latestKey >= 0) {
        const RankActivity::Row& r = m_activity->rows()[std::size_t(m_activity->rowOf(latestKey))];
        const QString who =
            count > 1 ? tr("The latest of them, rank %1,").arg(LaneJobs::rankOfKey(latestKey))
                      : tr("It");
        text += QLatin1Char('\n') +
                tr("%1 arrives at collectives %2 after the first member (the median over %3 "
                   "collectives): %4 later than the job's typical rank (%5)")
                    .arg(who, ZoomState::formatDuration(r.medianLatenessNs))
                    .arg(r.latenessSamples)
                    .arg(ZoomState::formatDuration(latest),
                         ZoomState::formatDuration(m_activity->typicalLatenessNs(r.job)));
    }
    QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), text, this);
    return true;
}

RankOverview::RankOverview(TimelineView* view, QWidget* parent)
    : QWidget(parent), m_view(view), m_canvas(new RankOverviewCanvas(view, this))
{
    m_canvas->setObjectName(QStringLiteral("rankOverviewCanvas"));
    m_orderBox = new QComboBox(this);
    m_orderBox->setObjectName(QStringLiteral("rankOverviewOrder"));
    m_orderBox->addItem(tr("Order: rank"));
    m_orderBox->addItem(tr("Order: latest at collectives first"));
    m_orderBox->setToolTip(tr("Sort the rows by rank, or by how late each rank arrives at "
                              "collectives, the median over them (a straggler comes first)"));
    QString legend;
    for (int s = 0; s < kRankStateCount; ++s)
        legend += QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2 &nbsp; ")
                      .arg(colors::rankStateColor(RankState(s)).name(),
                           colors::rankStateName(RankState(s)).toHtmlEscaped());
    legend +=
        QStringLiteral("<span style=\"color:%1\">|</span>&nbsp;%2 &nbsp; %3")
            .arg(colors::kArrivalSkew.name(), tr("arrival").toHtmlEscaped(), tr("late,&nbsp;ms:"));
    // The lateness scale kept on one line.
    for (int step = 0; step < colors::kLatenessSteps; ++step)
        legend += QStringLiteral("&nbsp;<span style=\"color:%1\">&#9632;</span>%2")
                      .arg(colors::latenessStepColor(step).name(),
                           colors::latenessStepLabel(step).toHtmlEscaped());
    auto* legendLabel = new QLabel(legend, this);
    legendLabel->setObjectName(QStringLiteral("rankOverviewLegend"));
    legendLabel->setTextFormat(Qt::RichText);
    QString meanings;
    for (int s = 0; s < kRankStateCount; ++s)
        meanings += QStringLiteral("<b>%1</b>: %2<br>")
                        .arg(colors::rankStateName(RankState(s)).toHtmlEscaped(),
                             colors::rankStateDescription(RankState(s)).toHtmlEscaped());
    meanings += tr("<b>late</b> (the column left of the rows): how much later than the job's "
                   "typical rank the rank arrives at collectives, the median over every "
                   "collective it completed with others; a straggler late by milliseconds at "
                   "each is too thin to see on its row when the whole trace is shown, but not "
                   "here. Where ranks share a pixel row, the latest of them.");
    legendLabel->setToolTip(meanings);
    legendLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    // On a narrow window (1280 px) the legend takes a second line rather than losing its end.
    legendLabel->setWordWrap(true);
    // Not in the header: shown there, it would reflow the legend and move the rows under the
    // pointer between a click and a Shift+click. The Timeline tab puts it in its toolbar.
    m_showAll = new QPushButton(tr("Show all ranks"), this);
    m_showAll->setObjectName(QStringLiteral("rankOverviewShowAll"));
    m_showAll->hide();
    auto* header = new QHBoxLayout;
    m_header = header;
    header->setContentsMargins(4, 0, 4, 0);
    header->addWidget(m_orderBox);
    header->addWidget(legendLabel, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(header);
    layout->addWidget(m_canvas, 1);

    connect(m_orderBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setOrder(index == 1 ? Order::Lateness : Order::Rank); });
    connect(&m_watcher, &QFutureWatcher<ActivityPtr>::finished, this, [this] {
        m_activity = m_watcher.result();
        m_canvas->setActivity(m_activity);
        applyOrder();
        Q_EMIT activityReady();
    });
    connect(view, &TimelineView::rangeChanged, m_canvas, qOverload<>(&QWidget::update));
    connect(view, &TimelineView::clockChanged, m_canvas, &RankOverviewCanvas::invalidate);
    connect(view, &TimelineView::labelWidthChanged, m_canvas, &RankOverviewCanvas::invalidate);
    connect(view, &TimelineView::selectionChanged, this, &RankOverview::selectionChanged);
    connect(m_canvas, &RankOverviewCanvas::selectedRanksChanged, this,
            [this](const QList<int>& ranks) {
                // The rows' keys: their ranks (the same rank of two jobs is one rank below).
                QList<int> filter;
                for (int key : ranks)
                    if (!filter.contains(LaneJobs::rankOfKey(key)))
                        filter << LaneJobs::rankOfKey(key);
                m_view->setRankFilter(filter);
                m_showAll->setVisible(!ranks.isEmpty());
                m_showAll->setToolTip(
                    tr("The lanes below show only the %1 of %2 ranks brushed on the overview "
                       "(click, Shift+click, Ctrl+click or drag down the rank numbers); show "
                       "every rank again (Esc)")
                        .arg(ranks.size())
                        .arg(m_canvas->layout().ranks().size()));
            });
    connect(m_showAll, &QPushButton::clicked, m_canvas, [this] { m_canvas->setSelectedRanks({}); });
}

RankOverview::~RankOverview()
{
    m_watcher.waitForFinished();
}

void RankOverview::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_activity.reset();
    m_canvas->setActivity(nullptr);
    m_canvas->setArrivals({});
    m_canvas->setHighlightedRank(-1);
    m_canvas->setRanks({});
    m_canvas->setFindings({}, {});
    if (!m_session) return;
    const SessionPtr s = m_session;
    m_watcher.setFuture(QtConcurrent::run([s] {
        return std::make_shared<const RankActivity>(
            RankActivity::build(s->events, LaneJobs::of(*s, s->jobs)));
    }));
}

void RankOverview::setDiagnosis(const AnalysisResult& analysis, const QList<TimelineMarker>& marks)
{
    std::vector<char> crashed;
    for (const Finding& f : analysis.findings)
        if (f.kind == FindingKind::Crash)
            for (int rank : f.ranks) {
                if (rank < 0) continue;
                if (crashed.size() <= std::size_t(rank)) crashed.resize(std::size_t(rank) + 1, 0);
                crashed[std::size_t(rank)] = 1;
            }
    std::vector<int> marked;
    for (const TimelineMarker& m : marks)
        marked.insert(marked.end(), m.ranks.begin(), m.ranks.end());
    m_canvas->setFindings(std::move(crashed), std::move(marked));
}

void RankOverview::setOrder(Order order)
{
    m_order = order;
    {
        const QSignalBlocker quiet(m_orderBox);
        m_orderBox->setCurrentIndex(order == Order::Lateness ? 1 : 0);
    }
    applyOrder();
}

void RankOverview::applyOrder()
{
    if (!m_activity) return;
    std::vector<const RankActivity::Row*> rows;
    for (const RankActivity::Row& row : m_activity->rows())
        if (m_shownJob < 0 || row.job < 0 || row.job == m_shownJob) rows.push_back(&row);
    // Latest first as the gutter measures it: beyond the typical rank of each row's job, so
    // that the rows of jobs shown together compare.
    if (m_order == Order::Lateness)
        std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
            return RankOverviewPainter::excessLatenessNs(*m_activity, a->key) >
                   RankOverviewPainter::excessLatenessNs(*m_activity, b->key);
        });
    std::vector<int> ranks;
    for (const RankActivity::Row* row : rows)
        ranks.push_back(row->key);
    m_canvas->setRanks(std::move(ranks));
}

void RankOverview::setShownJob(int job)
{
    m_shownJob = job;
    applyOrder();
}

int RankOverview::preferredHeight(int maxPx) const
{
    const int header = std::max(m_orderBox->sizeHint().height(),
                                m_header->hasHeightForWidth() ? m_header->heightForWidth(width())
                                                              : m_header->sizeHint().height());
    const int rowsPx = std::max(0, maxPx - header);
    if (m_activity) return header + m_canvas->layout().fittedHeight(rowsPx);
    return header + RankOverviewLayout::preferredHeight(
                        m_session ? int(m_session->folder.ranks().size()) : 1, rowsPx);
}

void RankOverview::selectionChanged()
{
    const SessionPtr s = m_view->session();
    const LaneJobs& jobs = m_view->layout().laneJobs();
    std::vector<std::pair<int, std::int64_t>> arrivals;
    if (s) {
        // A rank arrives when it enters the call, as the detail view's skew and the details
        // table have it (collectiveEnterExit).
        for (std::size_t i : m_view->selectedCollectivePeers()) {
            const CollectiveRecord& c = s->events.collectives[i];
            const std::int64_t t = collectiveEnterExit(c).first;
            if (t >= 0)
                arrivals.emplace_back(jobs.overviewKey(jobs.jobOfLane(c.laneIndex), c.rank),
                                      m_view->displayTimeNs(c.rank, t));
        }
    }
    const TimelineEventRef ref = m_view->selected();
    m_canvas->setHighlightedRank(s && ref.isValid()
                                     ? jobs.overviewKey(jobs.jobOfLane(ref.lane),
                                                        s->events.lanes[std::size_t(ref.lane)].rank)
                                     : m_view->selectedRank());
    m_canvas->setArrivals(std::move(arrivals));
}

} // namespace rankscope
