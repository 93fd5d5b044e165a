#pragma once

#include "model/tracesession.h"

#include <QMainWindow>
#include <memory>
#include <tuple>

class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QTreeView;

namespace rankscope {

class FindingsPanel;
class FolderOverview;
class LogViewer;
class InvestigationStore;
class IssueBrowser;
class StartPage;
class TaxonomyBrowser;
class WalkthroughPanel;
class SourceTreeModel;
class TimelinePanel;
class TraceLoader;

// One row of Help > Keyboard Shortcuts.
struct ShortcutRow {
    QString where;  // the menu, tab or dock the shortcut works in
    QString action; // what it does
    QString keys;   // as the platform writes them ("Ctrl+F"), or a gesture ("Shift+drag")
    bool operator<(const ShortcutRow& o) const
    {
        return std::tie(where, action, keys) < std::tie(o.where, o.action, o.keys);
    }
    bool operator==(const ShortcutRow& o) const
    {
        return std::tie(where, action, keys) == std::tie(o.where, o.action, o.keys);
    }
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openFolder(const QString& path);
    SessionPtr session() const { return m_session; }
    TraceLoader* loader() const { return m_loader; }
    QTreeView* sourceTree() const { return m_sourceTree; }
    QTabWidget* pages() const { return m_pages; }
    TimelinePanel* timeline() const { return m_timeline; }
    TaxonomyBrowser* taxonomyBrowser() const { return m_taxonomy; }
    WalkthroughPanel* walkthroughPanel() const { return m_walkthrough; }
    StartPage* startPage() const { return m_startPage; }
    QPlainTextEdit* notesEdit() const { return m_notes; }
    InvestigationStore* investigations() const { return m_store.get(); }
    FindingsPanel* findingsPanel() const { return m_findings; }
    LogViewer* logViewer() const { return m_logViewer; }
    IssueBrowser* issueBrowser() const { return m_issues; }
    qint64 investigationId() const { return m_investigationId; }
    // Help > Keyboard Shortcuts: every action and button of the window that has a shortcut, read
    // off the widgets themselves, and the keys the timeline handles in its own event handlers.
    QList<ShortcutRow> shortcutList() const;
    // The keys and gestures TimelineView and its find field handle without a QAction
    // (TimelinePanel::bindings(), since they cannot be read off the widgets); the tests press
    // each one.
    static QList<ShortcutRow> timelineKeys();
    // Writes the investigation report (HTML for .html/.htm, else Markdown) with a snapshot of
    // the timeline as it is shown now; what File > Export Report… does after its dialog.
    // Refused (false, with the reason) for a path inside the opened folder, as are the other
    // exports: see ExportPath.
    bool exportReport(const QString& path, QString* error);
    // File > Export Merged Chrome Trace… and Export Timeline PNG… / SVG… after their dialogs.
    bool exportChromeTrace(const QString& path, QString* error);
    bool exportTimelinePng(const QString& path, QString* error);
    bool exportTimelineSvg(const QString& path, QString* error);
    // Where an export's save dialog starts: the last folder exported to this run, else the
    // user's documents (never the opened folder, which a bare file name would mean).
    QString exportStartPath(const QString& fileName) const;
    // Bookmarks the timeline's visible range in the investigation; returns the bookmark id.
    qint64 bookmarkTimelineRange();
    QListWidget* bookmarkList() const { return m_bookmarks; }

    static constexpr int kMaxRecentFolders = 8;
    // The window's size on the first run (no saved geometry) on a screen of this available size.
    static QSize firstRunSize(QSize availableScreen);
    // Whether docks on both sides, at the widths the first show gives them, would leave the
    // pages (timeline, report, issues) less than a readable width of about 100 characters.
    static bool sideDocksCrowdThePages(int windowWidth, int leftDocksWidth, int rightDocksWidth,
                                       int averageCharWidth);
    // The walkthrough dock's width on the first show, in average characters.
    static constexpr int kWalkthroughDockChars = 36;

Q_SIGNALS:
    void sessionChanged(rankscope::SessionPtr session);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void createActions();
    void createDocks();
    void chooseFolder();
    void chooseDigest(); // a .rsdigest written by rankscope-digest
    void rebuildRecentMenu();
    void rememberRecent(const QString& path);
    void showAbout();
    void setLoading(bool loading);
    // Reading is done: the folder, its timeline and sources are shown, the diagnosis follows.
    void onRead(const SessionPtr& session);
    void onLoaded(const SessionPtr& session);
    void onFailed(const QString& reason);
    void chooseChromeTraceFile();
    void choosePngFile();
    void chooseSvgFile();
    // The export dialog; empty when cancelled.
    QString chooseExportFile(const QString& title, const QString& fileName, const QString& filter,
                             QString* selectedFilter = nullptr);
    // False, with the reason in `error`, when no folder is open or `path` lies inside it.
    bool mayExport(const QString& path, QString* error) const;
    void createTriage();
    void refreshStartPage();
    void showShortcuts();
    void saveNotes();
    void createFindings();
    void createIssues();
    void tabifyDocksOnTheLeft();
    void showAnalysis();
    void chooseReportFile();
    void refreshBookmarks();
    void removeSelectedBookmark();
    void updateBookmarkActions();
    QString placeOf(const QObject* object) const;

    TraceLoader* m_loader = nullptr;
    SessionPtr m_session;
    QString m_pendingPath;
    QString m_openedPath;          // of the session shown: a folder or a .rsdigest
    QString m_lastExportDirectory; // this run's last export folder, where the next dialog starts
    SourceTreeModel* m_sourceModel = nullptr;
    QTreeView* m_sourceTree = nullptr;
    QTabWidget* m_pages = nullptr;
    FolderOverview* m_overview = nullptr;
    TimelinePanel* m_timeline = nullptr;
    QMenu* m_recentMenu = nullptr;
    // File > Export Timeline PNG / SVG: disabled for a folder with no trace to draw.
    QAction* m_exportTimelinePng = nullptr;
    QAction* m_exportTimelineSvg = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_statusLabel = nullptr;
    std::unique_ptr<InvestigationStore> m_store;
    qint64 m_investigationId = -1;
    QStackedWidget* m_overviewStack = nullptr;
    StartPage* m_startPage = nullptr;
    TaxonomyBrowser* m_taxonomy = nullptr;
    WalkthroughPanel* m_walkthrough = nullptr;
    QPlainTextEdit* m_notes = nullptr;
    QTimer* m_notesTimer = nullptr;
    FindingsPanel* m_findings = nullptr;
    LogViewer* m_logViewer = nullptr;
    QListWidget* m_bookmarks = nullptr;
    bool m_layoutRestored = false; // a saved window state was applied; keep its dock sizes
    bool m_shown = false;
    bool m_diagnosing = false;         // the open session is read, its diagnosis not there yet
    bool m_diagnosisCancelled = false; // the open session's diagnosis was cancelled
    IssueBrowser* m_issues = nullptr;
};

} // namespace rankscope
