#pragma once

#include "model/tracesession.h"

#include <QMainWindow>

class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTreeView;

namespace rankscope {

class FolderOverview;
class SourceTreeModel;
class TimelinePanel;
class TraceLoader;

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

    static constexpr int kMaxRecentFolders = 8;

Q_SIGNALS:
    void sessionChanged(rankscope::SessionPtr session);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createDocks();
    void chooseFolder();
    void rebuildRecentMenu();
    void rememberRecent(const QString& path);
    void showAbout();
    void setLoading(bool loading);
    void onLoaded(const SessionPtr& session);
    void onFailed(const QString& reason);
    void exportChromeTrace();

    TraceLoader* m_loader = nullptr;
    SessionPtr m_session;
    QString m_pendingPath;
    SourceTreeModel* m_sourceModel = nullptr;
    QTreeView* m_sourceTree = nullptr;
    QTabWidget* m_pages = nullptr;
    FolderOverview* m_overview = nullptr;
    TimelinePanel* m_timeline = nullptr;
    QMenu* m_recentMenu = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_statusLabel = nullptr;
};

} // namespace rankscope
