#pragma once

#include "model/overview/rankactivity.h"
#include "model/tracesession.h"
#include "views/timeline/rankoverviewlayout.h"
#include "views/timeline/rankoverviewpainter.h"

#include <QFutureWatcher>
#include <QWidget>
#include <memory>

class QComboBox;
class QLayout;
class QPushButton;

namespace rankscope {

class TimelineView;

using ActivityPtr = std::shared_ptr<const RankActivity>;

// The rows of the rank overview: paints through RankOverviewPainter, maps the mouse through
// RankOverviewLayout. A sideways drag over the tracks shows that time range in the detail view.
// Ranks are brushed: a click selects a row's rank, Shift+click the rows from the last click,
// Ctrl+click adds or removes one, a drag down the rank numbers (or up or down the tracks)
// selects the rows it crosses; Esc, or a click on the marks strip, clears the selection.
class RankOverviewCanvas : public QWidget {
    Q_OBJECT
public:
    explicit RankOverviewCanvas(TimelineView* view, QWidget* parent = nullptr);

    void setActivity(ActivityPtr activity);
    void setRanks(std::vector<int> ranks);
    void setArrivals(std::vector<std::pair<int, std::int64_t>> arrivals);
    void setHighlightedRank(int rank);
    // What the diagnosis says of the rows' ranks (of the analysed job): `crashed` by rank, the
    // ranks that crashed; `marked` the ranks the findings' marks name, whose rows are emphasised
    // where rows are thin. Both empty until the diagnosis arrives.
    void setFindings(std::vector<char> crashed, std::vector<int> marked);
    // The brushed ranks in display order; empty when none is (every rank is shown below).
    const std::vector<int>& selectedRanks() const { return m_selected; }
    void setSelectedRanks(std::vector<int> ranks);
    // Everything shown changed (clock, markers): repaint from scratch.
    void invalidate();
    const RankOverviewLayout& layout() const { return m_layout; }
    // The detail view's track left edge in this widget's coordinates, for the layout.
    int trackLeft() const;
    RankState stateAt(int rank, int x) const;
    // Every rank's row (a pixel row a rank at least) over `zoom`, the tracks from `trackLeft`,
    // for the whole-timeline picture; null until the activity is read.
    QImage renderWhole(const ZoomState& zoom, int trackLeft) const;

Q_SIGNALS:
    void selectedRanksChanged(const QList<int>& ranks);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    enum class Brush { None, Time, Ranks };
    RankOverviewFrame currentFrame() const;
    // What a drag from the press to `pos` brushes: ranks from the rank numbers or when mostly
    // vertical, time otherwise; None while it is still a click.
    Brush brushTo(QPoint pos) const;
    void clicked(QPoint pos, Qt::KeyboardModifiers modifiers);

    TimelineView* m_view;
    ActivityPtr m_activity;
    std::vector<std::pair<int, std::int64_t>> m_arrivals;
    std::vector<char> m_crashed; // by rank
    int m_highlightedRank = -1;
    RankOverviewLayout m_layout;
    RankOverviewPainter m_painter;
    QImage m_image;
    struct CacheKey {
        std::int64_t startNs = 0, endNs = 0;
        int widthPx = 0;
        QSize size;
        quint64 version = 0;
        bool operator==(const CacheKey&) const = default;
    };
    CacheKey m_key;
    quint64 m_version = 1;
    std::vector<int> m_selected;
    int m_anchorRank = -1; // the last clicked rank, where Shift+click ranges start
    QPoint m_press{-1, -1};
    QPoint m_drag{-1, -1};
};

// The Timeline tab's rank overview: a row per rank coloured by what it does, above the detail
// lanes and on their time axis, with a legend and the row order. The activity is computed in a
// worker when a session arrives.
class RankOverview : public QWidget {
    Q_OBJECT
public:
    enum class Order { Rank, Lateness };

    explicit RankOverview(TimelineView* view, QWidget* parent = nullptr);
    ~RankOverview() override;

    // A new session: its activity is computed in a worker; the findings are the diagnosis'.
    void setSession(SessionPtr session);
    // The diagnosis of the session arrived, the view's markers made of it (`marks`): the rows of
    // the ranks it says crashed are drawn so, those its marks name emphasised. Called once per
    // session, on this thread.
    void setDiagnosis(const AnalysisResult& analysis, const QList<TimelineMarker>& marks);
    void setOrder(Order order);
    // Where the folder mixes jobs: only `job`'s rows (-1: a row per job and rank, the analysed
    // job's first).
    void setShownJob(int job);
    int shownJob() const { return m_shownJob; }
    Order order() const { return m_order; }
    // The activity of the current session, null until the worker is done.
    ActivityPtr activity() const { return m_activity; }
    RankOverviewCanvas* canvas() const { return m_canvas; }
    QComboBox* orderBox() const { return m_orderBox; }
    // Clears the rank brush; shown while ranks are brushed. In no layout of the overview's:
    // whoever shows the overview places it (the Timeline tab, in its toolbar).
    QPushButton* showAllButton() const { return m_showAll; }
    // Height that shows every rank at the largest row height, capped at `maxPx`, with no empty
    // pixel row under the rows (the emphasised rows taken into account).
    int preferredHeight(int maxPx) const;

Q_SIGNALS:
    void activityReady();

private:
    void applyOrder();
    void selectionChanged();

    TimelineView* m_view;
    SessionPtr m_session;
    ActivityPtr m_activity;
    QFutureWatcher<ActivityPtr> m_watcher;
    Order m_order = Order::Rank;
    int m_shownJob = -1;
    QComboBox* m_orderBox = nullptr;
    QLayout* m_header = nullptr; // the order box and the legend, which may wrap
    RankOverviewCanvas* m_canvas = nullptr;
    QPushButton* m_showAll = nullptr;
};

} // namespace rankscope
