#pragma once

#include "model/overview/rankactivity.h"
#include "model/tracesession.h"
#include "views/timeline/rankoverviewlayout.h"
#include "views/timeline/rankoverviewpainter.h"

#include <QFutureWatcher>
#include <QWidget>
#include <memory>

class QComboBox;

namespace rankscope {

class TimelineView;

using ActivityPtr = std::shared_ptr<const RankActivity>;

// The rows of the rank overview: paints through RankOverviewPainter, maps the mouse through
// RankOverviewLayout. A drag over the tracks shows that time range in the detail view; a click
// on a row scrolls the detail view to the rank.
class RankOverviewCanvas : public QWidget {
    Q_OBJECT
public:
    explicit RankOverviewCanvas(TimelineView* view, QWidget* parent = nullptr);

    void setActivity(ActivityPtr activity, std::vector<char> crashed);
    void setRanks(std::vector<int> ranks);
    void setArrivals(std::vector<std::pair<int, std::int64_t>> arrivals);
    void setHighlightedRank(int rank);
    // Everything shown changed (clock, markers): repaint from scratch.
    void invalidate();
    const RankOverviewLayout& layout() const { return m_layout; }
    // The detail view's track left edge in this widget's coordinates, for the layout.
    int trackLeft() const;
    RankState stateAt(int rank, int x) const;

Q_SIGNALS:
    void rankClicked(int rank);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    RankOverviewFrame currentFrame() const;

    TimelineView* m_view;
    ActivityPtr m_activity;
    std::vector<char> m_crashed;
    std::vector<std::pair<int, std::int64_t>> m_arrivals;
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
    int m_pressX = -1;
    int m_dragX = -1;
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

    void setSession(SessionPtr session);
    void setOrder(Order order);
    Order order() const { return m_order; }
    // The activity of the current session, null until the worker is done.
    ActivityPtr activity() const { return m_activity; }
    RankOverviewCanvas* canvas() const { return m_canvas; }
    QComboBox* orderBox() const { return m_orderBox; }
    // Height that shows every rank at the largest row height, capped at `maxPx`.
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
    QComboBox* m_orderBox = nullptr;
    RankOverviewCanvas* m_canvas = nullptr;
};

} // namespace rankscope
