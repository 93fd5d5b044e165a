#pragma once

#include "model/tracesession.h"
#include "views/timeline/detailstabs.h"

#include <QImage>
#include <QWidget>

class QCheckBox;
class QPushButton;
class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTextBrowser;
class QToolButton;

namespace rankscope {

class CollectiveChart;
class RankBreakdownChart;
class RankOverview;
class TimelineView;

// One key or mouse gesture that the Timeline tab handles in its own event handlers (the view's
// and the find field's). No QAction carries these, so this is the one table of them: Help >
// Keyboard Shortcuts lists it, the tool row's hints and the find field's placeholder show it.
struct TimelineBinding {
    enum class Place { View, FindField };
    Place place = Place::View;
    QString keys;   // as the platform writes them ("Shift+wheel"), or a gesture ("click")
    QString action; // what it does, as Help says it ("Scroll the ranks up / down")
    QString hint;   // the short form after the keys in a hint ("scrolls ranks")
    QString hintText() const { return keys + QLatin1Char(' ') + hint; }
};

// The key hints of the tool row, greyed: as many whole hints as fit, then "…", nothing when not
// even the first fits; the tooltip lists them all, one a line. The row can shrink without a
// clipped glyph.
class KeyHintLabel : public QWidget {
public:
    KeyHintLabel(const QStringList& hints, QWidget* parent = nullptr);
    // What is drawn at the current width.
    QString shownText() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {0, sizeHint().height()}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString joined(qsizetype count) const;

    QStringList m_hints;
};

// The Timeline tab: the view, a find bar (Ctrl+F), the clock-alignment toggle, PNG export and,
// under the view, the selected event's details and the charts (time per rank, a collective by
// rank), whose bars select on the view and highlight the view's selection.
class TimelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePanel(QWidget* parent = nullptr);

    // Everything the view and its find field handle without a QAction, the most used first (the
    // tool row shows the hints that fit in this order).
    static QList<TimelineBinding> bindings();

    void setSession(SessionPtr session);
    // The session's diagnosis arrived (once per session, after setSession): the view's clock
    // offsets and the findings' markers, the rank overview's crashed and emphasised rows, and the
    // overview sized again for its emphasised rows.
    void setDiagnosis(const AnalysisResult& analysis);
    TimelineView* view() const { return m_view; }
    RankOverview* rankOverview() const { return m_overview; }
    QLineEdit* findEdit() const { return m_find; }
    // Where the folder mixes jobs: which job the lanes and the rank overview show, each on its
    // own time scale (item 0 every job on one axis, item j + 1 job j); hidden otherwise.
    QComboBox* jobBox() const { return m_jobBox; }
    void showJob(int job); // -1: every job
    KeyHintLabel* keyHints() const { return m_keyHints; }
    QTextBrowser* details() const { return m_details; }
    // The details and the charts under the lanes, folded to their tab row while nothing is
    // selected.
    DetailsTabs* bottomTabs() const { return m_bottom; }
    RankBreakdownChart* breakdownChart() const { return m_breakdown; }
    CollectiveChart* collectiveChart() const { return m_collective; }
    // Raises the time-per-rank chart under the view.
    void showCharts();
    // Whether the session holds trace events: without them there is nothing to draw, so Fit,
    // Align clocks and Export… are disabled and the exports refuse.
    bool hasTrace() const;
    // Saves the whole timeline: the rank overview, then every rank and lane, over the whole
    // trace (TimelineView::exportPng); false (with the reason in `error`) when there is no trace
    // or the file cannot be written.
    bool exportPng(const QString& path, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);
    // Ctrl+F: the main window's Find action calls this while the Timeline tab is current.
    void showFindBar();
    // What the user chose that outlives the session: the height they dragged the pane under
    // the lanes to (the main window keeps it in its settings).
    QByteArray saveState() const;
    void restoreState(const QByteArray& state);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void sizeOverview();
    // Fit, Align clocks and Export… enabled while there is a trace to draw (hasTrace).
    void enableTraceControls();
    // True with a trace to export; false with the reason in `error` without one.
    bool mayExport(QString* error) const;
    // The rank overview on the whole-timeline picture's time axis (null until it is read).
    QImage exportedOverview() const;
    void updateFindStatus(int count, int current);
    // Details of the new selection, and its bars highlighted in the charts.
    void selectionChanged();
    // The selection's details in the pane under the lanes and on its tab row, and the pane
    // unfolded while there is a selection.
    void showDetails();
    // The height the pane under the lanes wants: its tab row folded; unfolded, the height the
    // user dragged it to, else what the page shown needs.
    int bottomPaneHeight() const;
    // The pane under the lanes given bottomPaneHeight(), the lanes the rest.
    void fitBottomPane();
    // The user dragged a handle of the splitter: the pane's fold and height follow the one above
    // the pane.
    void bottomPaneDragged(int position, int handle);

    static constexpr qint32 kStateVersion = 1;

    TimelineView* m_view = nullptr;
    RankOverview* m_overview = nullptr;
    QSplitter* m_splitter = nullptr;
    bool m_overviewSized = false;
    QWidget* m_findBar = nullptr;
    QLineEdit* m_find = nullptr;
    QLabel* m_findStatus = nullptr;
    QCheckBox* m_aligned = nullptr;
    QPushButton* m_fit = nullptr;
    QPushButton* m_export = nullptr;
    QComboBox* m_jobBox = nullptr;
    KeyHintLabel* m_keyHints = nullptr;
    QTextBrowser* m_details = nullptr;
    DetailsTabs* m_bottom = nullptr;
    int m_bottomHeight = 0; // dragged by the user; 0 until then
    RankBreakdownChart* m_breakdown = nullptr;
    CollectiveChart* m_collective = nullptr;
};

} // namespace rankscope
