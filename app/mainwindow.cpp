#include "app/mainwindow.h"

#include "model/analysisreport.h"
#include "model/digest/digest.h"
#include "model/export/chrometraceexporter.h"
#include "model/export/exportpath.h"
#include "model/investigation/investigationstore.h"
#include "model/kb/issuecorpus.h"
#include "model/report/investigationreport.h"
#include "model/trace/kinetoreader.h"
#include "model/traceloader.h"
#include "views/counttext.h"
#include "views/findings/findingsmodel.h"
#include "views/findings/findingspanel.h"
#include "views/folderoverview.h"
#include "views/issues/issuebrowser.h"
#include "views/logviewer/logviewer.h"
#include "views/models/sourcetreemodel.h"
#include "views/preferences/loadlimitsdialog.h"
#include "views/startpage/startpage.h"
#include "views/taxonomy/taxonomybrowser.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

namespace rankscope {

namespace {

const QString kRecentKey = QStringLiteral("recentFolders");

// A dropped trace folder or digest (`rankscope-digest`'s .rsdigest file), or empty.
QString droppedFolder(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls()) {
        const QFileInfo info(url.toLocalFile());
        if (url.isLocalFile() &&
            (info.isDir() || (info.isFile() && Digest::isDigestPath(info.filePath()))))
            return info.absoluteFilePath();
    }
    return {};
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_loader(new TraceLoader(this)), m_sourceModel(new SourceTreeModel(this))
{
    setWindowTitle(tr("RankScope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/rankscope.svg")));
    setAcceptDrops(true);
    resize(1280, 800);
    m_loader->setReadOptions(LoadLimitsDialog::saved());

    m_pages = new QTabWidget(this);
    m_pages->setDocumentMode(true);
    m_overview = new FolderOverview(m_pages);
    // The start page stands in for the overview until a folder is loaded.
    m_overviewStack = new QStackedWidget(m_pages);
    m_startPage = new StartPage(m_overviewStack);
    m_overviewStack->addWidget(m_startPage);
    m_overviewStack->addWidget(m_overview);
    m_pages->addTab(m_overviewStack, tr("Overview"));
    m_timeline = new TimelinePanel(m_pages);
    m_timeline->setObjectName(QStringLiteral("timelinePanel"));
    m_pages->addTab(m_timeline, tr("Timeline"));
    setCentralWidget(m_pages);
    // The pages' own minimum (the timeline's tool row with its key hints) would otherwise
    // squeeze the docks on a 1280-1440 px screen; past this width the hints are elided instead.
    m_pages->setMinimumWidth(fontMetrics().averageCharWidth() * 80);

    createActions();
    createDocks();
    createTriage();
    createFindings();
    createIssues();

    m_statusLabel = new QLabel(tr("Open a trace folder to begin."), this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(240);
    m_cancel = new QPushButton(tr("Cancel"), this);
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    setLoading(false);

    connect(m_cancel, &QPushButton::clicked, m_loader, &TraceLoader::cancel);
    connect(m_loader, &TraceLoader::progressChanged, this,
            [this](int permille, const QString& text) {
                m_progress->setValue(permille);
                m_statusLabel->setText(tr("Loading %1: %2").arg(m_pendingPath, text));
            });
    connect(m_loader, &TraceLoader::read, this, &MainWindow::onRead);
    connect(m_loader, &TraceLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &TraceLoader::failed, this, &MainWindow::onFailed);
    connect(m_loader, &TraceLoader::canceled, this, [this] {
        setLoading(false);
        // Cancelled once read: the folder stays shown, undiagnosed.
        const bool shown = m_diagnosing;
        m_diagnosing = false;
        m_diagnosisCancelled = shown;
        if (shown) {
            m_findings->setSession(m_session, FindingsPanel::Diagnosis::Cancelled);
            m_overview->setSession(m_session, tr("The diagnosis was cancelled: no findings."));
        }
        m_statusLabel->setText(shown ? tr("Diagnosis cancelled.") : tr("Loading cancelled."));
    });

    QSettings settings;
    const bool placed =
        restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    m_layoutRestored =
        restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
    if (!placed)
        if (const QScreen* screen = QGuiApplication::primaryScreen()) {
            const QSize size = firstRunSize(screen->availableSize());
            // Docks on both sides of the pages need more width than a small screen has: the
            // right-hand ones join the left-hand tabs there.
            const int charWidth = fontMetrics().averageCharWidth();
            if (sideDocksCrowdThePages(size.width(), m_findings->sizeHint().width(),
                                       kWalkthroughDockChars * charWidth, charWidth))
                tabifyDocksOnTheLeft();
            resize(size);
        }
    m_taxonomy->restoreState(settings.value(QStringLiteral("mainWindow/taxonomy")).toByteArray());
    m_walkthrough->restoreState(
        settings.value(QStringLiteral("mainWindow/walkthrough")).toByteArray());
    m_issues->restoreState(settings.value(QStringLiteral("mainWindow/issues")).toByteArray());
    m_timeline->restoreState(settings.value(QStringLiteral("mainWindow/timeline")).toByteArray());
}

QSize MainWindow::firstRunSize(QSize availableScreen)
{
    // Three docks and a timeline need room: most of a large screen, but no more than 90 % of any
    // screen, so that the frame and the title bar stay on it (a 1280 x 800 floor put them off a
    // 1366 x 768 laptop's).
    return (availableScreen * 0.9).boundedTo({1800, 1100});
}

bool MainWindow::sideDocksCrowdThePages(int windowWidth, int leftDocksWidth, int rightDocksWidth,
                                        int averageCharWidth)
{
    constexpr int kReadablePageChars = 100;
    return windowWidth - leftDocksWidth - rightDocksWidth < kReadablePageChars * averageCharWidth;
}

void MainWindow::tabifyDocksOnTheLeft()
{
    auto* findings = findChild<QDockWidget*>(QStringLiteral("findingsDock"));
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        if (dockWidgetArea(dock) == Qt::RightDockWidgetArea) tabifyDockWidget(findings, dock);
    findings->raise();
    // The window's minimum size is the layout's as last activated: lower it before resizing.
    layout()->activate();
}

MainWindow::~MainWindow()
{
    // The panel is destroyed after the store; let it write its last note while both exist.
    saveNotes();
    m_walkthrough->setInvestigation(nullptr, -1);
}

void MainWindow::createTriage()
{
    m_store = std::make_unique<InvestigationStore>();
    const QString notice = m_store->isOpen()
                               ? m_store->notice()
                               : tr("Investigations cannot be saved: %1").arg(m_store->lastError());
    m_startPage->setNotice(notice);
    if (!notice.isEmpty()) {
        // Not modal: the user can read it and carry on.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Investigation database"), notice,
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setModal(false);
        box->show();
    }
    connect(m_startPage, &StartPage::openFolderRequested, this, &MainWindow::chooseFolder);
    connect(m_startPage, &StartPage::reopenRequested, this, &MainWindow::openFolder);
    refreshStartPage();

    m_taxonomy = new TaxonomyBrowser(m_pages);
    m_taxonomy->setObjectName(QStringLiteral("taxonomyBrowser"));
    m_pages->addTab(m_taxonomy, tr("Taxonomy"));

    m_walkthrough = new WalkthroughPanel(this);
    m_walkthrough->setObjectName(QStringLiteral("walkthroughPanel"));
    auto* dock = new QDockWidget(tr("Walkthrough"), this);
    dock->setObjectName(QStringLiteral("walkthroughDock"));
    dock->setWidget(m_walkthrough);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    resizeDocks({dock}, {fontMetrics().averageCharWidth() * 48}, Qt::Horizontal);
    QAction* toggle = dock->toggleViewAction();
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W));
    if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("menuView"))) {
        view->addAction(toggle);
        view->addSeparator();
        QAction* overviewTab =
            view->addAction(tr("&Overview"), this, [this] { m_pages->setCurrentIndex(0); });
        overviewTab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
        QAction* timelineTab = view->addAction(tr("Time&line"), this,
                                               [this] { m_pages->setCurrentWidget(m_timeline); });
        timelineTab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
        QAction* taxonomyTab = view->addAction(tr("&Taxonomy"), this,
                                               [this] { m_pages->setCurrentWidget(m_taxonomy); });
        taxonomyTab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_3));
        // One Ctrl+F for the window: it finds events on the Timeline tab, symptoms elsewhere.
        QAction* find = view->addAction(tr("&Find"), this, [this] {
            if (m_pages->currentWidget() == m_timeline) {
                m_timeline->showFindBar();
                return;
            }
            m_pages->setCurrentWidget(m_taxonomy);
            m_taxonomy->filterEdit()->setFocus();
            m_taxonomy->filterEdit()->selectAll();
        });
        find->setShortcut(QKeySequence::Find);
    }
    m_notes = new QPlainTextEdit(this);
    m_notes->setObjectName(QStringLiteral("investigationNotes"));
    m_notes->setPlaceholderText(tr("Open a folder to keep notes on its investigation."));
    m_notes->setEnabled(false);
    m_notesTimer = new QTimer(this);
    m_notesTimer->setSingleShot(true);
    m_notesTimer->setInterval(600);
    connect(m_notes, &QPlainTextEdit::textChanged, m_notesTimer, qOverload<>(&QTimer::start));
    connect(m_notesTimer, &QTimer::timeout, this, &MainWindow::saveNotes);
    auto* notesDock = new QDockWidget(tr("Investigation notes"), this);
    notesDock->setObjectName(QStringLiteral("notesDock"));
    // Bookmarks sit under the notes: both are what the user keeps of an investigation.
    auto* notesPane = new QWidget(notesDock);
    auto* notesLayout = new QVBoxLayout(notesPane);
    notesLayout->setContentsMargins(0, 0, 0, 0);
    notesLayout->addWidget(m_notes, 3);
    auto* bookmarksHead = new QHBoxLayout;
    bookmarksHead->addWidget(new QLabel(tr("Timeline bookmarks:"), notesPane), 1);
    auto* removeBookmark = new QPushButton(tr("Remove"), notesPane);
    removeBookmark->setObjectName(QStringLiteral("removeBookmark"));
    bookmarksHead->addWidget(removeBookmark);
    notesLayout->addLayout(bookmarksHead);
    m_bookmarks = new QListWidget(notesPane);
    m_bookmarks->setObjectName(QStringLiteral("bookmarkList"));
    m_bookmarks->setToolTip(tr("Click a bookmark to show its range on the timeline; F2 renames "
                               "it, Delete removes it (also in its context menu)."));
    m_bookmarks->setAccessibleName(tr("Timeline bookmarks"));
    // Renaming is the action's job (F2 or the context menu), not a click: a click jumps there.
    m_bookmarks->setEditTriggers(QAbstractItemView::NoEditTriggers);
    notesLayout->addWidget(m_bookmarks, 1);
    connect(m_bookmarks, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        const qint64 t0 = item->data(Qt::UserRole).toLongLong();
        const qint64 t1 = item->data(Qt::UserRole + 1).toLongLong();
        m_pages->setCurrentWidget(m_timeline);
        m_timeline->view()->setVisibleRange(t0, t1);
    });
    // Only edits reach here: refreshBookmarks() fills the list with its signals blocked.
    connect(m_bookmarks, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        const QString label = item->text().simplified();
        if (!label.isEmpty())
            m_store->renameBookmark(item->data(Qt::UserRole + 2).toLongLong(), label);
        refreshBookmarks(); // shows the stored label (the old one if the edit was blank)
    });
    auto* renameBookmark = new QAction(tr("Rename Bookmark"), m_bookmarks);
    renameBookmark->setObjectName(QStringLiteral("actionRenameBookmark"));
    renameBookmark->setShortcut(QKeySequence(Qt::Key_F2));
    renameBookmark->setShortcutContext(Qt::WidgetShortcut);
    connect(renameBookmark, &QAction::triggered, this, [this] {
        if (QListWidgetItem* item = m_bookmarks->currentItem()) m_bookmarks->editItem(item);
    });
    auto* deleteBookmark = new QAction(tr("Remove Bookmark"), m_bookmarks);
    deleteBookmark->setObjectName(QStringLiteral("actionRemoveBookmark"));
    deleteBookmark->setShortcut(QKeySequence::Delete);
    deleteBookmark->setShortcutContext(Qt::WidgetShortcut);
    connect(deleteBookmark, &QAction::triggered, this, &MainWindow::removeSelectedBookmark);
    connect(removeBookmark, &QPushButton::clicked, deleteBookmark, &QAction::trigger);
    m_bookmarks->addAction(renameBookmark);
    m_bookmarks->addAction(deleteBookmark);
    m_bookmarks->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(m_bookmarks, &QListWidget::currentItemChanged, this,
            &MainWindow::updateBookmarkActions);
    updateBookmarkActions();
    notesDock->setWidget(notesPane);
    addDockWidget(Qt::RightDockWidgetArea, notesDock);
    tabifyDockWidget(dock, notesDock);
    dock->raise();
    if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("menuView"))) {
        view->insertAction(toggle, notesDock->toggleViewAction());
        QAction* bookmark =
            view->addAction(tr("&Bookmark Timeline Range"), this, [this, notesDock] {
                if (bookmarkTimelineRange() > 0) {
                    notesDock->show();
                    notesDock->raise();
                }
            });
        bookmark->setObjectName(QStringLiteral("actionBookmarkRange"));
        bookmark->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    }

    connect(m_taxonomy, &TaxonomyBrowser::walkthroughRequested, this,
            [this, dock](const QString& id) {
                dock->show();
                dock->raise();
                m_walkthrough->openWalkthrough(id, m_taxonomy->currentNodeId());
            });

    if (QMenu* help = menuBar()->findChild<QMenu*>(QStringLiteral("menuHelp"))) {
        QAction* keys = new QAction(tr("&Keyboard Shortcuts"), this);
        keys->setShortcut(QKeySequence::HelpContents);
        connect(keys, &QAction::triggered, this, &MainWindow::showShortcuts);
        help->insertAction(help->actions().value(0), keys);
    }
}

void MainWindow::createFindings()
{
    m_logViewer = new LogViewer(m_pages);
    m_logViewer->setObjectName(QStringLiteral("logViewer"));
    m_pages->addTab(m_logViewer, tr("Logs"));

    m_findings = new FindingsPanel(this);
    m_findings->setObjectName(QStringLiteral("findingsPanel"));
    m_findings->setTargets(m_logViewer, m_timeline->view(), m_walkthrough);
    auto* dock = new QDockWidget(tr("Findings"), this);
    dock->setObjectName(QStringLiteral("findingsDock"));
    dock->setWidget(m_findings);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    if (auto* files = findChild<QDockWidget*>(QStringLiteral("filesDock"))) {
        tabifyDockWidget(files, dock);
        dock->raise();
    }
    // A finding's marker on the timeline selects that finding in the dock.
    connect(m_timeline->view(), &TimelineView::markerClicked, this,
            [this, dock](int, const QString& id) {
                const int row = m_findings->model()->rowOfFinding(id);
                if (row < 0) return;
                dock->show();
                dock->raise();
                m_findings->selectFinding(row);
            });
    // A digest's original traces are gone: said once, on the status bar.
    connect(m_timeline->view(), &TimelineView::rawDetailUnavailable, this,
            [this](const QString& why) { statusBar()->showMessage(why, 15000); });
    connect(m_findings, &FindingsPanel::logViewerShown, this,
            [this] { m_pages->setCurrentWidget(m_logViewer); });
    connect(m_findings, &FindingsPanel::timelineShown, this,
            [this] { m_pages->setCurrentWidget(m_timeline); });
    connect(m_findings, &FindingsPanel::walkthroughShown, this, [this] {
        if (auto* w = findChild<QDockWidget*>(QStringLiteral("walkthroughDock"))) {
            w->show();
            w->raise();
        }
    });
    // The store keeps no args; the details pane reads the event back from its source.
    m_timeline->view()->setDetailsProvider([](const TraceSession& session, const Lane& lane,
                                              std::size_t eventIndex) {
        QList<QPair<QString, QString>> rows;
        const QList<SourceFile>& sources = session.folder.sources();
        if (lane.sourceIndex < 0 || lane.sourceIndex >= sources.size() ||
            eventIndex >= lane.sourceOffset.size())
            return rows;
        const nlohmann::json event =
            readEventDetails(sources[lane.sourceIndex], lane.sourceOffset[eventIndex]);
        const auto args = event.is_object() ? event.find("args") : event.end();
        if (!event.is_object() || args == event.end() || !args->is_object()) {
            rows.append({tr("Args"), event.is_null() ? tr("could not be read back") : tr("none")});
            return rows;
        }
        for (auto it = args->begin(); it != args->end(); ++it)
            rows.append(
                {QString::fromStdString(it.key()),
                 QString::fromStdString(it->is_string() ? it->get<std::string>() : it->dump())});
        return rows;
    });
    if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("menuView"))) {
        view->addAction(dock->toggleViewAction());
        QAction* logsTab =
            view->addAction(tr("Lo&gs"), this, [this] { m_pages->setCurrentWidget(m_logViewer); });
        logsTab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_4));
        // The charts sit under the timeline, so that a click on a bar shows its rank there.
        QAction* charts = view->addAction(tr("Timeline C&harts"), this, [this] {
            m_pages->setCurrentWidget(m_timeline);
            m_timeline->showCharts();
        });
        charts->setObjectName(QStringLiteral("actionTimelineCharts"));
        charts->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H));
    }
}

void MainWindow::createIssues()
{
    m_issues = new IssueBrowser(m_pages);
    m_issues->setObjectName(QStringLiteral("issueBrowser"));
    m_issues->setCorpusPath(IssueCorpus::defaultPath()); // opened (and seeded) on first show
    m_pages->addTab(m_issues, tr("Issues"));
    connect(m_issues, &IssueBrowser::nodeRequested, this, [this](const QString& id) {
        m_pages->setCurrentWidget(m_taxonomy);
        m_taxonomy->selectNode(id);
    });
    connect(m_issues, &IssueBrowser::walkthroughRequested, this, [this](const QString& id) {
        if (auto* w = findChild<QDockWidget*>(QStringLiteral("walkthroughDock"))) {
            w->show();
            w->raise();
        }
        m_walkthrough->openWalkthrough(id, {});
    });
    if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("menuView"))) {
        QAction* issuesTab =
            view->addAction(tr("&Issues"), this, [this] { m_pages->setCurrentWidget(m_issues); });
        issuesTab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_5));
    }
}

void MainWindow::showAnalysis()
{
    const AnalysisResult& analysis = m_session->analysis;
    m_findings->setSession(m_session);
    m_timeline->setDiagnosis(analysis);
    if (m_investigationId > 0)
        m_store->setFindingsJson(
            m_investigationId,
            QByteArray::fromStdString(AnalysisReport::findingsJson(analysis).dump()));
}

void MainWindow::saveNotes()
{
    m_notesTimer->stop();
    if (m_investigationId > 0 && m_notes->isEnabled() && !m_notes->isReadOnly())
        m_store->setNotes(m_investigationId, m_notes->toPlainText());
}

void MainWindow::refreshStartPage()
{
    if (m_store->isOpen()) m_startPage->setInvestigations(m_store->recentInvestigations());
}

QList<ShortcutRow> MainWindow::timelineKeys()
{
    // Ctrl+F is also the window's Find action, listed with the actions.
    QList<ShortcutRow> rows;
    for (const TimelineBinding& b : TimelinePanel::bindings())
        rows.append(
            {b.place == TimelineBinding::Place::View ? tr("Timeline") : tr("Timeline find field"),
             b.action, b.keys});
    return rows;
}

QString MainWindow::placeOf(const QObject* object) const
{
    // A menu names itself; a widget is named by the tab or dock it sits in.
    if (const auto* menu = qobject_cast<const QMenu*>(object)) {
        QString title = menu->title();
        return title.remove(QLatin1Char('&'));
    }
    for (const QObject* o = object; o; o = o->parent()) {
        if (const auto* dock = qobject_cast<const QDockWidget*>(o)) return dock->windowTitle();
        if (const auto* w = qobject_cast<const QWidget*>(o))
            if (const int tab = m_pages->indexOf(const_cast<QWidget*>(w)); tab >= 0)
                return m_pages->tabText(tab).remove(QLatin1Char('&'));
    }
    return tr("Window");
}

QList<ShortcutRow> MainWindow::shortcutList() const
{
    QList<ShortcutRow> rows = timelineKeys();
    const auto keys = [](const QAction* a) {
        QStringList out;
        for (const QKeySequence& k : a->shortcuts())
            out << k.toString(QKeySequence::NativeText);
        return out.join(QLatin1String(", "));
    };
    for (const QAction* a : findChildren<QAction*>()) {
        if (a->shortcut().isEmpty()) continue;
        QString text = a->text();
        text.remove(QLatin1Char('&'));
        // A window-wide action is where its menu is; a widget's own action where that widget is.
        const QList<QObject*> users = a->associatedObjects();
        const QObject* user = a->shortcutContext() == Qt::WindowShortcut ||
                                      a->shortcutContext() == Qt::ApplicationShortcut
                                  ? (users.isEmpty() ? a->parent() : users.first())
                                  : a->parent();
        rows.append({placeOf(user), text, keys(a)});
    }
    // Buttons carry shortcuts of their own (the log viewer's next/previous cited line).
    for (const QAbstractButton* b : findChildren<QAbstractButton*>()) {
        if (b->shortcut().isEmpty()) continue;
        QString text = b->text().isEmpty() ? b->toolTip() : b->text();
        text.remove(QLatin1Char('&'));
        rows.append({placeOf(b), text, b->shortcut().toString(QKeySequence::NativeText)});
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

void MainWindow::showShortcuts()
{
    const auto rows = shortcutList();
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto* table = new QTableWidget(int(rows.size()), 3, &dialog);
    table->setObjectName(QStringLiteral("shortcutTable"));
    table->setHorizontalHeaderLabels({tr("Where"), tr("Action"), tr("Shortcut")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int r = 0; r < int(rows.size()); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(rows[r].where));
        table->setItem(r, 1, new QTableWidgetItem(rows[r].action));
        table->setItem(r, 2, new QTableWidgetItem(rows[r].keys));
    }
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    // Compact rows, and tall enough to show every row without scrolling where the screen allows.
    table->verticalHeader()->setDefaultSectionSize(dialog.fontMetrics().height() + 8);
    const int rowsHeight = (dialog.fontMetrics().height() + 8) * (int(rows.size()) + 1);
    // Wide enough for every column's longest text, so that no key is elided or behind a sideways
    // scrollbar, within the screen (a fixed width in characters hid the Shortcut column).
    table->resizeColumnsToContents();
    int columnsWidth = 0;
    for (int c = 0; c < table->columnCount(); ++c)
        columnsWidth += table->columnWidth(c);
    const QMargins margins = layout->contentsMargins();
    const int wanted = columnsWidth + 2 * table->frameWidth() +
                       table->verticalScrollBar()->sizeHint().width() + margins.left() +
                       margins.right();
    const int widest = screen()->availableGeometry().width() * 9 / 10;
    if (wanted > widest) {
        // A narrow screen: the actions wrap, so that the places and the keys stay whole.
        table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Fixed);
        table->setColumnWidth(1, table->columnWidth(1) - (wanted - widest));
        table->resizeRowsToContents();
    }
    dialog.resize(std::min(wanted, widest),
                  std::min(rowsHeight + dialog.fontMetrics().height() * 5, height() * 9 / 10));
    dialog.exec();
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(QIcon::fromTheme(QStringLiteral("document-open")),
                                    tr("&Open Folder…"), this, &MainWindow::chooseFolder);
    open->setShortcut(QKeySequence::Open);
    open->setObjectName(QStringLiteral("actionOpenFolder"));
    file->addAction(tr("Open &Digest…"), this, &MainWindow::chooseDigest)
        ->setObjectName(QStringLiteral("actionOpenDigest"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
    rebuildRecentMenu();
    QAction* reload = file->addAction(tr("Re&load"), this, [this] {
        if (m_session) openFolder(m_openedPath);
    });
    reload->setShortcut(QKeySequence::Refresh);
    file->addAction(tr("Load &Limits…"), this,
                    [this] {
                        LoadLimitsDialog dialog(LoadLimitsDialog::saved(), this);
                        if (dialog.exec() != QDialog::Accepted) return;
                        LoadLimitsDialog::save(dialog.limits());
                        m_loader->setReadOptions(dialog.limits());
                    })
        ->setObjectName(QStringLiteral("actionLoadLimits"));
    file->addSeparator();
    QAction* exportTrace = file->addAction(tr("Export Merged &Chrome Trace…"), this,
                                           &MainWindow::chooseChromeTraceFile);
    exportTrace->setObjectName(QStringLiteral("actionExportChromeTrace"));
    m_exportTimelinePng =
        file->addAction(tr("Export Timeline &PNG…"), this, &MainWindow::choosePngFile);
    m_exportTimelinePng->setObjectName(QStringLiteral("actionExportTimelinePng"));
    m_exportTimelineSvg =
        file->addAction(tr("Export Timeline S&VG…"), this, &MainWindow::chooseSvgFile);
    m_exportTimelineSvg->setObjectName(QStringLiteral("actionExportTimelineSvg"));
    QAction* exportReport =
        file->addAction(tr("Export &Report…"), this, &MainWindow::chooseReportFile);
    exportReport->setObjectName(QStringLiteral("actionExportReport"));
    exportReport->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->setObjectName(QStringLiteral("menuView"));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->setObjectName(QStringLiteral("menuHelp"));
    help->addAction(tr("&About RankScope"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::createDocks()
{
    m_sourceTree = new QTreeView(this);
    m_sourceTree->setObjectName(QStringLiteral("sourceTree"));
    m_sourceTree->setModel(m_sourceModel);
    m_sourceTree->setUniformRowHeights(true);
    // A global resize mode survives model resets, a per-section one does not.
    m_sourceTree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto* dock = new QDockWidget(tr("Files by rank"), this);
    dock->setObjectName(QStringLiteral("filesDock"));
    dock->setWidget(m_sourceTree);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {420}, Qt::Horizontal);
    if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("menuView")))
        view->addAction(dock->toggleViewAction());
}

void MainWindow::chooseFolder()
{
    const QString start = m_session ? m_session->folder.path() : QString();
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Trace Folder"), start);
    if (!dir.isEmpty()) openFolder(dir);
}

void MainWindow::chooseDigest()
{
    const QString start = m_session ? m_session->folder.path() : QString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Digest"), start,
                                                      tr("RankScope digests (*.rsdigest)"));
    if (!path.isEmpty()) openFolder(path);
}

void MainWindow::openFolder(const QString& path)
{
    m_pendingPath = QFileInfo(path).absoluteFilePath();
    setLoading(true);
    m_statusLabel->setText(tr("Loading %1…").arg(m_pendingPath));
    m_loader->start(m_pendingPath);
}

void MainWindow::setLoading(bool loading)
{
    m_progress->setVisible(loading);
    m_cancel->setVisible(loading);
    if (loading) m_progress->setValue(0);
}

void MainWindow::onRead(const SessionPtr& session)
{
    const SessionPtr previous = m_session;
    m_session = session;
    m_sourceModel->setSession(session);
    m_sourceTree->expandAll();
    m_overview->setSession(session, tr("Diagnosing… the findings appear here when the analysis "
                                       "ends."));
    m_timeline->setSession(session);
    m_exportTimelinePng->setEnabled(m_timeline->hasTrace());
    m_exportTimelineSvg->setEnabled(m_timeline->hasTrace());
    m_overviewStack->setCurrentWidget(m_overview);
    TimelineView* view = m_timeline->view();
    if (previous)
        for (int rank : previous->folder.ranks())
            view->setRankBanner(rank, {});
    // One banner per rank, naming each of its traces that could not be read whole.
    QHash<int, QStringList> problems;
    for (const SourceFile& f : session->folder.sources()) {
        if (!f.rank || f.status == SourceStatus::Ok) continue;
        if (f.kind != SourceKind::Kineto && f.kind != SourceKind::FlightRecorder &&
            f.kind != SourceKind::HorovodTimeline)
            continue;
        problems[*f.rank]
            << tr("%1 %2: %3").arg(f.relativePath, sourceStatusName(f.status), f.message);
    }
    for (auto it = problems.begin(); it != problems.end(); ++it)
        view->setRankBanner(it.key(), it.value().join(QStringLiteral("; ")));
    // The previous folder's findings and auto-checks no longer apply.
    m_findings->setSession(session, FindingsPanel::Diagnosis::Running);
    m_walkthrough->clearAutoCheckResults();
    m_statusLabel->setText(tr("Diagnosing %1…").arg(session->folder.path()));
    m_diagnosing = true;
    m_diagnosisCancelled = false;
}

void MainWindow::onLoaded(const SessionPtr& session)
{
    if (session != m_session) onRead(session);
    m_diagnosing = false;
    setLoading(false);
    m_overview->setSession(session); // now with the findings' counts
    if (m_store->isOpen()) {
        saveNotes(); // the previous folder's
        m_store->closeInvestigation(m_investigationId);
        m_investigationId = m_store->openInvestigation(session->folder.path());
        m_walkthrough->setInvestigation(m_store.get(), m_investigationId);
        {
            const QSignalBlocker quiet(m_notes);
            m_notes->setPlainText(m_store->notes(m_investigationId));
        }
        m_notes->setEnabled(m_investigationId > 0);
        // Another RankScope writes this investigation: shown as saved, not editable here.
        const QString readOnly = m_store->readOnlyReason(m_investigationId);
        m_notes->setReadOnly(!readOnly.isEmpty());
        m_notes->setPlaceholderText(readOnly.isEmpty()
                                        ? tr("What you tried, what you saw, what is next…")
                                        : tr("Investigation %1").arg(readOnly));

        refreshStartPage();
        refreshBookmarks();
    } else {
        m_walkthrough->setInvestigation(nullptr, -1); // drops the previous folder's checklist
    }
    showAnalysis();
    m_walkthrough->setAutoCheckResults(session->autoChecks);
    // The Walkthrough follows the folder: where this folder has no checklist of its own yet, the
    // fix its headline finding calls for.
    if (m_walkthrough->patternId().isEmpty() && !session->analysis.findings.empty() &&
        session->analysis.findings.front().severity != Severity::Info)
        m_walkthrough->openForFinding(session->analysis.findings.front());
    const TraceFolder& folder = session->folder;
    // What was opened: the folder, or the digest of one (whose listing names the folder).
    m_openedPath = m_pendingPath;
    setWindowTitle(tr("%1 — RankScope").arg(QFileInfo(m_openedPath).fileName()));
    // A folder mixing runs counts the analysed job's ranks, as the Overview's first table lists
    // them: another run's rank 0 is not a rank of this job.
    const JobSplit& split = session->jobs;
    const int analysedJob = split.mixed() ? split.analysed : -1;
    qsizetype ranks = 0;
    for (const OverviewRankRow& row : FolderOverview::rankRows(folder, split))
        if (row.job == analysedJob && row.rank >= 0) ++ranks;
    m_statusLabel->setText(
        tr("%1: %2%3, %4")
            .arg(m_openedPath, countText(ranks, tr("%1 rank"), tr("%1 ranks")),
                 split.mixed() ? tr(" in the analysed job of %1").arg(split.jobs.size())
                               : QString(),
                 countText(folder.sources().size(), tr("%1 file"), tr("%1 files"))));
    if (m_store->isOpen() && m_store->isReadOnly(m_investigationId))
        m_statusLabel->setText(
            m_statusLabel->text() +
            tr("; investigation %1").arg(m_store->readOnlyReason(m_investigationId)));
    rememberRecent(m_openedPath);
    Q_EMIT sessionChanged(session);
}

QString MainWindow::exportStartPath(const QString& fileName) const
{
    if (!m_lastExportDirectory.isEmpty() &&
        (!m_session ||
         ExportPath::refusal(m_lastExportDirectory, m_session->folder.path()).isEmpty()))
        return QDir(m_lastExportDirectory).filePath(fileName);
    return ExportPath::defaultPath(fileName);
}

bool MainWindow::mayExport(const QString& path, QString* error) const
{
    const QString refused =
        !m_session ? tr("No folder is open.") : ExportPath::refusal(path, m_session->folder.path());
    if (error) *error = refused;
    return refused.isEmpty();
}

QString MainWindow::chooseExportFile(const QString& title, const QString& fileName,
                                     const QString& filter, QString* selectedFilter)
{
    if (!m_session) {
        QMessageBox::information(this, title, tr("Open a trace folder first."));
        return {};
    }
    const QString path = QFileDialog::getSaveFileName(this, title, exportStartPath(fileName),
                                                      filter, selectedFilter);
    if (!path.isEmpty()) m_lastExportDirectory = QFileInfo(path).absolutePath();
    return path;
}

void MainWindow::chooseChromeTraceFile()
{
    const QString path =
        chooseExportFile(tr("Export Merged Chrome Trace"), QStringLiteral("merged.trace.json"),
                         tr("Chrome trace JSON (*.json)"));
    QString error;
    if (!path.isEmpty() && !exportChromeTrace(path, &error))
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::choosePngFile()
{
    const QString path = chooseExportFile(tr("Export Timeline PNG"), QStringLiteral("timeline.png"),
                                          tr("PNG images (*.png)"));
    QString error;
    if (!path.isEmpty() && !exportTimelinePng(path, &error))
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::chooseSvgFile()
{
    const QString path = chooseExportFile(tr("Export Timeline SVG"), QStringLiteral("timeline.svg"),
                                          tr("SVG drawings (*.svg)"));
    QString error;
    if (!path.isEmpty() && !exportTimelineSvg(path, &error))
        QMessageBox::warning(this, tr("Export failed"), error);
}

bool MainWindow::exportChromeTrace(const QString& path, QString* error)
{
    if (!mayExport(path, error)) return false;
    // The timeline's alignment applies: what the user sees is what Perfetto shows.
    ChromeTraceExporter exporter(m_session->events, m_timeline->view()->clock().offsetNs);
    if (exporter.writeFile(path)) return true;
    if (error) *error = exporter.errorString();
    return false;
}

bool MainWindow::exportTimelinePng(const QString& path, QString* error)
{
    if (!mayExport(path, error)) return false;
    return m_timeline->exportPng(path, error);
}

bool MainWindow::exportTimelineSvg(const QString& path, QString* error)
{
    if (!mayExport(path, error)) return false;
    return m_timeline->exportSvg(path, error);
}

void MainWindow::chooseReportFile()
{
    QString filter;
    QString path = chooseExportFile(tr("Export Report"),
                                    m_session ? QFileInfo(m_session->folder.path()).fileName() +
                                                    QStringLiteral("-report.html")
                                              : QString(),
                                    tr("Self-contained HTML (*.html);;Markdown (*.md)"), &filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter.contains(QLatin1String("*.md")) ? QStringLiteral(".md")
                                                       : QStringLiteral(".html");
    QString error;
    if (!exportReport(path, &error))
        QMessageBox::warning(this, tr("Export failed"), error);
    else
        m_statusLabel->setText(tr("Report written to %1").arg(path));
}

bool MainWindow::exportReport(const QString& path, QString* error)
{
    if (!mayExport(path, error)) return false;
    // Without its diagnosis a report would list no findings, as if none had been found.
    if (m_diagnosing || m_diagnosisCancelled) {
        if (error)
            *error = m_diagnosing ? tr("The diagnosis is still running: export the report once "
                                       "the findings appear.")
                                  : tr("The diagnosis was cancelled: reload the folder to "
                                       "diagnose it before exporting a report.");
        return false;
    }
    // What the user typed a moment ago belongs in the report.
    m_walkthrough->flush();
    saveNotes();
    InvestigationReport report(*m_session);
    if (m_investigationId > 0)
        report.readInvestigation(*m_store, m_investigationId);
    else
        report.setNotes(m_notes->toPlainText());
    if (m_session->events.eventCount() > 0) {
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        if (m_timeline->view()->renderImage().save(&buffer, "PNG")) report.setTimelinePng(png);
    }
    return report.writeFile(path, error);
}

qint64 MainWindow::bookmarkTimelineRange()
{
    if (!m_session || m_investigationId <= 0) {
        m_statusLabel->setText(tr("Open a folder with a trace to bookmark its timeline."));
        return -1;
    }
    const ZoomState& zoom = m_timeline->view()->zoom();
    const qint64 t0 = zoom.visibleStartNs();
    const qint64 t1 = zoom.visibleEndNs();
    if (t1 <= t0) return -1;
    const qint64 id = m_store->addBookmark(
        m_investigationId, t0, t1,
        tr("%1 – %2 ms").arg(double(t0) / 1e6, 0, 'f', 3).arg(double(t1) / 1e6, 0, 'f', 3));
    refreshBookmarks();
    return id;
}

void MainWindow::refreshBookmarks()
{
    const QListWidgetItem* current = m_bookmarks->currentItem();
    const qint64 currentId = current ? current->data(Qt::UserRole + 2).toLongLong() : -1;
    {
        const QSignalBlocker quiet(m_bookmarks); // itemChanged means "the user renamed it"
        m_bookmarks->clear();
        if (m_investigationId > 0)
            for (const TimelineBookmark& b : m_store->bookmarks(m_investigationId)) {
                auto* item = new QListWidgetItem(b.label, m_bookmarks);
                item->setFlags(item->flags() | Qt::ItemIsEditable);
                item->setData(Qt::UserRole, b.t0Ns);
                item->setData(Qt::UserRole + 1, b.t1Ns);
                item->setData(Qt::UserRole + 2, b.id);
                if (b.id == currentId) m_bookmarks->setCurrentItem(item);
            }
    }
    updateBookmarkActions(); // the blocked list did not say its current item changed
}

void MainWindow::updateBookmarkActions()
{
    // Rename and Remove act on the current bookmark.
    const bool any = m_bookmarks->currentItem() != nullptr;
    for (QAction* a : m_bookmarks->actions())
        a->setEnabled(any);
    if (auto* remove = findChild<QPushButton*>(QStringLiteral("removeBookmark")))
        remove->setEnabled(any);
}

void MainWindow::removeSelectedBookmark()
{
    const QListWidgetItem* item = m_bookmarks->currentItem();
    if (!item) return;
    m_store->removeBookmark(item->data(Qt::UserRole + 2).toLongLong());
    refreshBookmarks();
}

void MainWindow::onFailed(const QString& reason)
{
    setLoading(false);
    m_statusLabel->setText(tr("Could not open %1").arg(m_pendingPath));
    QMessageBox::warning(this, tr("Could not open folder"), reason);
}

void MainWindow::rememberRecent(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentFolders)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openFolder(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::showAbout()
{
    QMessageBox::about(
        this, tr("About RankScope"),
        tr("<h3>RankScope %1</h3>"
           "<p>Triage and timelines for distributed deep-learning training: open a folder of "
           "per-rank traces and logs and see which rank stalled, which collective was "
           "mismatched and what fixed it for others.</p>"
           "<p>The symptom taxonomy and fix patterns come from the labelled issues of "
           "Gu et al., <i>Rise of Distributed Deep Learning Training in the Big Model Era: From a "
           "Software Engineering Perspective</i>, ACM TOSEM 32(6), 2023 "
           "(doi:10.1145/3597204), used under the Apache-2.0 licence.</p>")
            .arg(QStringLiteral(RANKSCOPE_VERSION)));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!droppedFolder(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString dir = droppedFolder(event->mimeData());
    if (dir.isEmpty()) return;
    event->acceptProposedAction();
    openFolder(dir);
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (std::exchange(m_shown, true) || m_layoutRestored) return;
    // First run: docks sized before the window had a geometry get squeezed; give the findings
    // their readable width now that the real one is known.
    // Queued: the layout applies its own sizes when the window is first laid out.
    QTimer::singleShot(0, this, [this] {
        auto* findings = findChild<QDockWidget*>(QStringLiteral("findingsDock"));
        auto* walkthrough = findChild<QDockWidget*>(QStringLiteral("walkthroughDock"));
        if (!findings || !walkthrough) return;
        // The checklist is empty until "Fix it"; the findings are what the user reads first.
        // Tabbed together (a small screen), the findings' width is the one that counts.
        if (dockWidgetArea(walkthrough) == dockWidgetArea(findings))
            resizeDocks({findings}, {m_findings->sizeHint().width()}, Qt::Horizontal);
        else
            resizeDocks({findings, walkthrough},
                        {m_findings->sizeHint().width(),
                         fontMetrics().averageCharWidth() * kWalkthroughDockChars},
                        Qt::Horizontal);
    });
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_loader->cancel();
    QSettings settings;
    settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    settings.setValue(QStringLiteral("mainWindow/taxonomy"), m_taxonomy->saveState());
    settings.setValue(QStringLiteral("mainWindow/walkthrough"), m_walkthrough->saveState());
    settings.setValue(QStringLiteral("mainWindow/issues"), m_issues->saveState());
    settings.setValue(QStringLiteral("mainWindow/timeline"), m_timeline->saveState());
    m_walkthrough->flush();
    saveNotes();
    QMainWindow::closeEvent(event);
}

} // namespace rankscope
