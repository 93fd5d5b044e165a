#pragma once

#include "model/kb/issuecorpus.h"
#include "model/kb/symptomclassifier.h"

#include <QFutureWatcher>
#include <QWidget>
#include <array>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableView;
class QTextBrowser;
class QTimer;
class QTreeView;
class QUrl;

namespace rankscope {

class ClassificationModel;
class IssueImporter;
class IssueTableModel;

// The issue corpus to browse (the study's issues, its how-to questions and the user's imports):
// a table with full-text search and filters, a count of the matches, a detail pane for the
// selected issue, a "classify this text" box and import from a file or folder with progress and
// Cancel. Leaf symptoms link to the taxonomy (nodeRequested), fix patterns to their checklist
// (walkthroughRequested).
class IssueBrowser : public QWidget {
    Q_OBJECT
public:
    enum Filter {
        FrameworkFilter,
        SourceFilter,
        StageFilter,
        LeafFilter,
        FixPatternFilter,
        DistributedFilter,
        FilterCount
    };
    // The search box waits this long after the last key before querying.
    static constexpr int kSearchDelayMs = 200;
    // The detail pane shows at most this much of an issue's text.
    static constexpr int kMaxBodyChars = 20000;
    // A line of the detail pane the first layout aims for, in average characters: its label
    // column and a value such as "fault issue labelled in the study" side by side.
    static constexpr int kReadableDetailChars = 48;

    explicit IssueBrowser(QWidget* parent = nullptr);
    ~IssueBrowser() override;

    // Opens the corpus now; false with error() (also shown in the tab) on failure.
    bool openCorpus(const QString& path);
    // Opens the corpus when the browser is first shown (opening seeds a new database).
    void setCorpusPath(const QString& path);
    const IssueCorpus& corpus() const { return m_corpus; }
    QString error() const { return m_corpus.error(); }

    void setSearchText(const QString& text); // applied at once
    // Selects the combo entry whose data is `value` ("" for all); false if there is none.
    bool setFilterValue(Filter filter, const QString& value);
    IssueFilter currentFilter() const;
    bool selectIssue(qint64 id);
    qint64 currentIssueId() const { return m_currentId; }

    // Starts an import in the background; false if one is running or no corpus is open.
    bool importPath(const QString& path);
    // Classifies off the GUI thread; classified() follows.
    void classifyText(const QString& text);

    QLineEdit* searchEdit() const { return m_search; }
    QTableView* table() const { return m_table; }
    IssueTableModel* model() const { return m_model; }
    QLabel* countLabel() const { return m_count; }
    // Above the table while no issue has every word of the search and the rows have some.
    QLabel* anyWordNote() const { return m_anyWordNote; }
    QTextBrowser* detail() const { return m_detail; }
    QComboBox* filterCombo(Filter filter) const { return m_filters[filter]; }
    QPlainTextEdit* classifyEdit() const { return m_classifyEdit; }
    QPushButton* classifyButton() const { return m_classifyButton; }
    ClassificationModel* classificationModel() const { return m_classification; }
    QTreeView* classificationView() const { return m_classificationView; }
    // "Unsure: …" when the best candidate is below the ranker's threshold, else the top guess.
    QLabel* classificationVerdict() const { return m_classifyVerdict; }
    IssueImporter* importer() const { return m_importer; }
    QProgressBar* importProgress() const { return m_importProgress; }
    QPushButton* cancelImportButton() const { return m_cancelImport; }
    QLabel* statusLabel() const { return m_status; }

    QByteArray saveState() const;
    void restoreState(const QByteArray& state);

Q_SIGNALS:
    void nodeRequested(const QString& nodeId);
    void walkthroughRequested(const QString& patternId);
    void classified();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void applyFilter();
    void fillFilters();
    void showIssue(qint64 id);
    void shareOutWidth();
    int widestFilter() const; // the widest filter's width with its current value whole
    void keepFiltersWhole();
    void showCorpusError();
    void onLink(const QUrl& url);
    void chooseImport(bool folder);
    void setImporting(bool importing);
    void onImported(int count, const QStringList& skipped);

    IssueCorpus m_corpus;
    QString m_pendingPath;
    IssueTableModel* m_model = nullptr;
    ClassificationModel* m_classification = nullptr;
    IssueImporter* m_importer = nullptr;
    QFutureWatcher<QList<Candidate>> m_classifyWatcher;
    int m_classifyGeneration = 0;
    QLineEdit* m_search = nullptr;
    QTimer* m_searchTimer = nullptr;
    QLabel* m_count = nullptr;
    QLabel* m_anyWordNote = nullptr;
    std::array<QComboBox*, FilterCount> m_filters{};
    QTableView* m_table = nullptr;
    QTextBrowser* m_detail = nullptr;
    QPlainTextEdit* m_classifyEdit = nullptr;
    QPushButton* m_classifyButton = nullptr;
    QTreeView* m_classificationView = nullptr;
    QLabel* m_classifyVerdict = nullptr;
    QPushButton* m_importButton = nullptr;
    QProgressBar* m_importProgress = nullptr;
    QPushButton* m_cancelImport = nullptr;
    QLabel* m_status = nullptr;
    QSplitter* m_split = nullptr;
    QSplitter* m_rightSplit = nullptr;
    qint64 m_currentId = 0;
    bool m_sized = false; // splitter sizes set (restored, or shared out on the first show)
};

} // namespace rankscope
