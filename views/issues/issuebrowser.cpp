#include "views/issues/issuebrowser.h"

#include "model/kb/issueimporter.h"
#include "model/kb/taxonomy.h"
#include "views/counttext.h"
#include "views/issues/classificationmodel.h"
#include "views/issues/flowlayout.h"
#include "views/issues/issuetablemodel.h"
#include "views/issues/snippetdelegate.h"

#include <QAction>
#include <QComboBox>
#include <QDataStream>
#include <QDesktopServices>
#include <QFileDialog>
#include <QFontMetrics>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>

namespace rankscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString nodeLink(const QString& id)
{
    return QStringLiteral("<a href=\"node:%1\">%2</a>")
        .arg(esc(id), esc(IssueTableModel::leafLabel(id)));
}

// A filter as wide as the text it shows, so that neither "All leaf symptoms" nor a chosen value
// is cut off; the filters' flow layout wraps them as they grow.
class FilterCombo : public QComboBox {
public:
    explicit FilterCombo(QWidget* parent) : QComboBox(parent)
    {
        connect(this, &QComboBox::currentIndexChanged, this, &QWidget::updateGeometry);
    }
    QSize sizeHint() const override
    {
        QStyleOptionComboBox option;
        initStyleOption(&option);
        const QSize text(fontMetrics().horizontalAdvance(currentText()), fontMetrics().height());
        return {style()->sizeFromContents(QStyle::CT_ComboBox, &option, text, this).width(),
                QComboBox::sizeHint().height()};
    }
};

QString originName(const QString& origin)
{
    if (origin == QLatin1String("study"))
        return IssueBrowser::tr("fault issue labelled in the study");
    if (origin == QLatin1String("howto")) return IssueBrowser::tr("how-to question from the study");
    return IssueBrowser::tr("imported by you");
}

// A column never narrower than its header's title beside the sort arrow.
int widthShowingTitle(const QHeaderView* header, int section, int wanted)
{
    const QFontMetrics fm = header->fontMetrics();
    return std::max(wanted, fm.horizontalAdvance(
                                header->model()->headerData(section, Qt::Horizontal).toString()) +
                                4 * fm.averageCharWidth());
}

} // namespace

IssueBrowser::IssueBrowser(QWidget* parent)
    : QWidget(parent), m_model(new IssueTableModel(this)),
      m_classification(new ClassificationModel(this)), m_importer(new IssueImporter(this))
{
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("issueSearch"));
    m_search->setPlaceholderText(tr("Search issues: words of an error, a label, a repository…"));
    m_search->setClearButtonEnabled(true);
    m_searchTimer = new QTimer(this);
    m_searchTimer->setSingleShot(true);
    m_searchTimer->setInterval(kSearchDelayMs);
    connect(m_search, &QLineEdit::textChanged, m_searchTimer, qOverload<>(&QTimer::start));
    connect(m_search, &QLineEdit::returnPressed, this, &IssueBrowser::applyFilter);
    connect(m_searchTimer, &QTimer::timeout, this, &IssueBrowser::applyFilter);

    m_count = new QLabel(this);
    m_count->setObjectName(QStringLiteral("issueCount"));

    m_importButton = new QPushButton(tr("Import…"), this);
    m_importButton->setObjectName(QStringLiteral("issueImport"));
    m_importButton->setToolTip(tr("Add GitHub issue JSON (REST API or gh issue list --json), a "
                                  ".md/.txt report, or a folder of reports"));
    auto* importMenu = new QMenu(m_importButton);
    importMenu->addAction(tr("Import &File…"), this, [this] { chooseImport(false); });
    importMenu->addAction(tr("Import F&older…"), this, [this] { chooseImport(true); });
    m_importButton->setMenu(importMenu);
    m_importProgress = new QProgressBar(this);
    m_importProgress->setObjectName(QStringLiteral("issueImportProgress"));
    m_importProgress->setMaximumWidth(fontMetrics().averageCharWidth() * 30);
    m_cancelImport = new QPushButton(tr("Cancel"), this);
    m_cancelImport->setObjectName(QStringLiteral("issueImportCancel"));
    connect(m_cancelImport, &QPushButton::clicked, m_importer, &IssueImporter::cancel);
    connect(m_importer, &IssueImporter::progressChanged, this, [this](int done, int total) {
        m_importProgress->setRange(0, total);
        m_importProgress->setValue(done);
        m_status->setText(tr("Classifying report %1 of %2…").arg(done).arg(total));
    });
    connect(m_importer, &IssueImporter::finished, this, &IssueBrowser::onImported);
    connect(m_importer, &IssueImporter::failed, this, [this](const QString& reason) {
        setImporting(false);
        m_status->setText(tr("Import failed: %1").arg(reason));
    });
    connect(m_importer, &IssueImporter::canceled, this, [this] {
        setImporting(false);
        m_status->setText(tr("Import cancelled; nothing was added."));
    });
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("issueStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true); // a long message must not widen the table side

    // The search has the top line to itself, so that it stays usable when the detail pane takes
    // most of a narrow page; the count and the import share the status line under the table.
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_importProgress);
    bottom->addWidget(m_cancelImport);
    bottom->addWidget(m_count);
    bottom->addWidget(m_importButton);

    static const char* const names[FilterCount] = {
        "issueFilterFramework", "issueFilterSource",     "issueFilterStage",
        "issueFilterLeaf",      "issueFilterFixPattern", "issueFilterDistributed"};
    const QString tips[FilterCount] = {tr("Framework"),   tr("Source"),
                                       tr("Stage"),       tr("Leaf symptom"),
                                       tr("Fix pattern"), tr("Distributed-specific")};
    // The tab shares the window with the docks, so the table side is narrow: the filters wrap
    // onto as many lines as its width needs.
    auto* filters = new FlowLayout;
    for (int f = 0; f < FilterCount; ++f) {
        auto* combo = new FilterCombo(this);
        combo->setObjectName(QLatin1String(names[f]));
        combo->setToolTip(tips[f]);
        // The narrowest it gets: where even a line of its own is narrower than its text.
        combo->setMinimumContentsLength(f == LeafFilter || f == FixPatternFilter ? 10 : 6);
        connect(combo, &QComboBox::currentIndexChanged, this, &IssueBrowser::applyFilter);
        connect(combo, &QComboBox::currentIndexChanged, this, &IssueBrowser::keepFiltersWhole);
        m_filters[f] = combo;
        filters->addWidget(combo);
    }

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("issueTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    const int ch = fontMetrics().averageCharWidth();
    const int widths[IssueTableModel::ColumnCount] = {22, 11, 13, 14, 22, 22, 11, 40};
    for (int c = 0; c < IssueTableModel::ColumnCount; ++c)
        m_table->setColumnWidth(c,
                                widthShowingTitle(m_table->horizontalHeader(), c, widths[c] * ch));
    // The study's longest references whole: the issue number at their end tells rows apart.
    m_table->setColumnWidth(
        IssueTableModel::IssueColumn,
        std::max(m_table->columnWidth(IssueTableModel::IssueColumn),
                 fontMetrics().horizontalAdvance(QStringLiteral("keras-team/keras #12345")) +
                     2 * ch));
    m_table->setItemDelegateForColumn(
        IssueTableModel::MatchColumn,
        new SnippetDelegate(IssueTableModel::SnippetHtmlRole, m_table));
    // No sort indicator first: the model's default order (by issue, best match first while
    // searching); a third click on a header goes back to it.
    QHeaderView* header = m_table->horizontalHeader();
    header->setSortIndicatorClearable(true);
    header->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSortingEnabled(true);
    // The model resets when it sorts; keep the issue the user was reading selected.
    connect(header, &QHeaderView::sortIndicatorChanged, this, [this] {
        if (m_currentId && !selectIssue(m_currentId)) showIssue(0);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                showIssue(current.isValid() ? m_model->idAt(current.row()) : 0);
            });
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex& index) {
        const IssueRecord* r = m_model->recordAt(index.row());
        if (!r) return;
        if (index.column() == IssueTableModel::LeafColumn && !r->symptoms.isEmpty())
            Q_EMIT nodeRequested(r->symptoms.first());
        else if (index.column() == IssueTableModel::IssueColumn)
            QDesktopServices::openUrl(QUrl(r->link));
    });
    // Said above the results, as `rankscope issues search` says it: "NCCL timeout" once listed
    // issues that mention only "timeout" as if they matched both words.
    m_anyWordNote = new QLabel(IssueCorpus::anyWordNotice(), this);
    m_anyWordNote->setObjectName(QStringLiteral("issueAnyWordNote"));
    m_anyWordNote->setWordWrap(true);
    m_anyWordNote->hide();
    connect(m_model, &IssueTableModel::matchCountChanged, this, [this](int n) {
        m_count->setText(countText(n, tr("%1 issue"), tr("%1 issues")));
        m_anyWordNote->setVisible(m_model->matchesAnyWord());
    });

    m_detail = new QTextBrowser(this);
    m_detail->setObjectName(QStringLiteral("issueDetail"));
    m_detail->setOpenLinks(false);
    connect(m_detail, &QTextBrowser::anchorClicked, this, &IssueBrowser::onLink);

    auto* classifyBox = new QGroupBox(tr("Classify this text"), this);
    m_classifyEdit = new QPlainTextEdit(classifyBox);
    m_classifyEdit->setObjectName(QStringLiteral("classifyEdit"));
    m_classifyEdit->setPlaceholderText(
        tr("Paste an error message, a log or a whole issue; Ctrl+Enter ranks the symptoms."));
    m_classifyButton = new QPushButton(tr("Classify"), classifyBox);
    m_classifyButton->setObjectName(QStringLiteral("classifyButton"));
    connect(m_classifyButton, &QPushButton::clicked, this,
            [this] { classifyText(m_classifyEdit->toPlainText()); });
    // An action rather than a QShortcut, so that Help > Keyboard Shortcuts lists it.
    auto* run = new QAction(tr("Classify the pasted text"), m_classifyEdit);
    run->setObjectName(QStringLiteral("actionClassify"));
    run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    run->setShortcutContext(Qt::WidgetShortcut);
    connect(run, &QAction::triggered, m_classifyButton, &QPushButton::click);
    m_classifyEdit->addAction(run);
    m_classificationView = new QTreeView(classifyBox);
    m_classificationView->setObjectName(QStringLiteral("classificationView"));
    m_classificationView->setModel(m_classification);
    m_classificationView->setUniformRowHeights(true);
    m_classificationView->setColumnWidth(ClassificationModel::SymptomColumn, ch * 30);
    m_classificationView->setColumnWidth(ClassificationModel::ScoreColumn,
                                         widthShowingTitle(m_classificationView->header(),
                                                           ClassificationModel::ScoreColumn,
                                                           ch * 7));
    m_classificationView->setToolTip(tr("Double-click a symptom to open it in the Taxonomy tab"));
    connect(m_classificationView, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const QString id = index.data(ClassificationModel::SymptomIdRole).toString();
        if (!id.isEmpty()) Q_EMIT nodeRequested(id);
    });
    connect(&m_classifyWatcher, &QFutureWatcher<QList<Candidate>>::finished, this, [this] {
        m_classifyButton->setEnabled(true);
        m_classifyButton->setText(tr("Classify"));
        if (m_classifyWatcher.property("generation").toInt() != m_classifyGeneration) return;
        const QList<Candidate> ranked = m_classifyWatcher.result();
        m_classification->setCandidates(ranked);
        const SymptomClassifier& classifier = SymptomClassifier::instance();
        m_classifyVerdict->setText(
            ranked.isEmpty() ? QString()
            : classifier.isUnsure(ranked)
                ? tr("Unsure: no candidate reaches %1. The ranking below is a guess from weak "
                     "evidence and the study's base rates.")
                      .arg(probabilityText(classifier.ranking().unsureBelow))
                : tr("Most likely %1 (%2).")
                      .arg(IssueTableModel::leafLabel(ranked.first().symptom),
                           probabilityText(ranked.first().probability)));
        m_classificationView->expandToDepth(-1);
        if (m_classification->rowCount() > 0)
            m_classificationView->expand(m_classification->index(0, 0));
        Q_EMIT classified();
    });
    m_classifyVerdict = new QLabel(classifyBox);
    m_classifyVerdict->setObjectName(QStringLiteral("classificationVerdict"));
    m_classifyVerdict->setWordWrap(true);
    auto* classifyHint =
        new QLabel(tr("Double-click a symptom to open it in the Taxonomy tab."), classifyBox);
    classifyHint->setEnabled(false);
    classifyHint->setWordWrap(true);
    auto* classifyButtons = new QHBoxLayout;
    classifyButtons->addWidget(classifyHint, 1);
    classifyButtons->addWidget(m_classifyButton);
    auto* classifyLayout = new QVBoxLayout(classifyBox);
    auto* classifySplit = new QSplitter(Qt::Vertical, classifyBox);
    classifySplit->addWidget(m_classifyEdit);
    classifySplit->addWidget(m_classificationView);
    classifyLayout->addWidget(classifySplit, 1);
    classifyLayout->addWidget(m_classifyVerdict);
    classifyLayout->addLayout(classifyButtons);

    m_rightSplit = new QSplitter(Qt::Vertical, this);
    m_rightSplit->addWidget(m_detail);
    m_rightSplit->addWidget(classifyBox);
    m_rightSplit->setStretchFactor(0, 3);
    m_rightSplit->setStretchFactor(1, 2);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_search);
    leftLayout->addLayout(filters);
    leftLayout->addWidget(m_anyWordNote);
    leftLayout->addWidget(m_table, 1);
    leftLayout->addLayout(bottom);

    m_split = new QSplitter(Qt::Horizontal, this);
    m_split->addWidget(left);
    m_split->addWidget(m_rightSplit);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_split);

    setImporting(false);
    fillFilters();
    showIssue(0);
}

IssueBrowser::~IssueBrowser()
{
    m_importer->cancel();
    m_importer->waitForFinished();
    m_classifyWatcher.waitForFinished();
}

bool IssueBrowser::openCorpus(const QString& path)
{
    const QString target = path; // `path` may be m_pendingPath itself
    m_pendingPath.clear();
    const bool ok = m_corpus.open(target);
    m_model->setCorpus(ok ? &m_corpus : nullptr);
    fillFilters();
    applyFilter();
    if (!ok) showCorpusError();
    m_importButton->setEnabled(ok);
    return ok;
}

void IssueBrowser::setCorpusPath(const QString& path)
{
    m_pendingPath = path;
    if (isVisible()) openCorpus(path);
}

void IssueBrowser::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_sized) {
        // Size hints would give the detail and classify panes only their minimum.
        m_sized = true;
        shareOutWidth();
    }
    if (!m_pendingPath.isEmpty() && !m_corpus.isOpen()) openCorpus(m_pendingPath);
}

void IssueBrowser::shareOutWidth()
{
    // The detail and classify panes are read, the table is scanned by its Issue column (the
    // detail repeats the other columns): the panes get 45 % of the width, and a readable line
    // where the page is narrow (the docks beside the pages leave a 1280 px window about 600), as
    // long as the table keeps its Issue column whole.
    const int width = m_split->width() - m_split->handleWidth();
    const int readable = kReadableDetailChars * m_detail->fontMetrics().averageCharWidth() +
                         m_detail->verticalScrollBar()->sizeHint().width() +
                         2 * m_detail->frameWidth();
    const int table =
        std::max(m_table->columnWidth(IssueTableModel::IssueColumn) +
                     m_table->verticalScrollBar()->sizeHint().width() + 2 * m_table->frameWidth(),
                 widestFilter());
    const int panes = std::max(width * 9 / 20, std::min(readable, width - table));
    m_split->setSizes({width - panes, panes});
}

int IssueBrowser::widestFilter() const
{
    int widest = 0;
    for (const QComboBox* combo : m_filters)
        widest = std::max(widest, combo->sizeHint().width());
    return widest;
}

void IssueBrowser::keepFiltersWhole()
{
    // A long chosen value widens its filter: the table side makes room for it whole, taking it
    // from the detail and classify panes. Before the first show, shareOutWidth() counts it.
    if (!m_sized) return;
    const QList<int> sizes = m_split->sizes();
    if (sizes.size() != 2) return;
    const int total = sizes[0] + sizes[1];
    // Never so far that the panes would collapse.
    const int need = std::min(widestFilter(), total - m_rightSplit->minimumSizeHint().width());
    if (sizes[0] >= need) return;
    m_split->setSizes({need, total - need});
}

void IssueBrowser::showCorpusError()
{
    m_status->setText(tr("The issue database could not be opened: %1").arg(m_corpus.error()));
    m_detail->setHtml(tr("<h3>No issue database</h3><p>%1</p><p>Search, filters and import need "
                         "it; the classify box still works.</p>")
                          .arg(esc(m_corpus.error())));
}

void IssueBrowser::fillFilters()
{
    const IssueFacets facets = m_corpus.facets();
    const auto fill = [this](Filter f, const QString& all,
                             const QList<std::pair<QString, QString>>& items) {
        QComboBox* combo = m_filters[f];
        const QString kept = combo->currentData().toString();
        const QSignalBlocker quiet(combo);
        combo->clear();
        combo->addItem(all, QString());
        for (const auto& [label, value] : items) {
            combo->addItem(label, value);
            combo->setItemData(combo->count() - 1, value, Qt::ToolTipRole);
        }
        combo->setCurrentIndex(std::max(0, combo->findData(kept)));
        combo->updateGeometry(); // its width follows its text; the signal it would take is quiet
    };
    const auto same = [](const QStringList& values) {
        QList<std::pair<QString, QString>> out;
        for (const QString& v : values)
            out.append({v, v});
        return out;
    };
    const auto labelled = [](const QStringList& ids, QString (*label)(const QString&)) {
        QList<std::pair<QString, QString>> out;
        for (const QString& id : ids)
            out.append({label(id), id});
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
            return QString::localeAwareCompare(a.first, b.first) < 0;
        });
        return out;
    };
    fill(FrameworkFilter, tr("All frameworks"), same(facets.frameworks));
    fill(SourceFilter, tr("All sources"), same(facets.sources));
    QList<std::pair<QString, QString>> stages;
    for (const QString& s : facets.stages)
        stages.append({IssueTableModel::stageLabel(s), s});
    if (facets.hasHowTo)
        stages.append(
            {IssueTableModel::stageLabel(IssueCorpus::kHowToStage), IssueCorpus::kHowToStage});
    fill(StageFilter, tr("All stages"), stages);
    fill(LeafFilter, tr("All leaf symptoms"), labelled(facets.leaves, &IssueTableModel::leafLabel));
    fill(FixPatternFilter, tr("All fix patterns"),
         labelled(facets.fixPatterns, &IssueTableModel::fixPatternLabel));
    QList<std::pair<QString, QString>> distributed;
    if (facets.hasDistributedLabels)
        distributed = {{tr("Distributed-specific"), QStringLiteral("yes")},
                       {tr("Not distributed-specific"), QStringLiteral("no")}};
    fill(DistributedFilter, tr("Distributed or not"), distributed);
}

IssueFilter IssueBrowser::currentFilter() const
{
    IssueFilter f;
    f.text = m_search->text();
    f.framework = m_filters[FrameworkFilter]->currentData().toString();
    f.source = m_filters[SourceFilter]->currentData().toString();
    f.stage = m_filters[StageFilter]->currentData().toString();
    f.leaf = m_filters[LeafFilter]->currentData().toString();
    f.fixPattern = m_filters[FixPatternFilter]->currentData().toString();
    const QString d = m_filters[DistributedFilter]->currentData().toString();
    f.distributed = d == QLatin1String("yes")  ? IssueFilter::Distributed::Yes
                    : d == QLatin1String("no") ? IssueFilter::Distributed::No
                                               : IssueFilter::Distributed::Any;
    return f;
}

void IssueBrowser::applyFilter()
{
    m_searchTimer->stop();
    const qint64 keep = m_currentId;
    m_model->setFilter(currentFilter());
    m_table->setColumnHidden(IssueTableModel::MatchColumn,
                             m_model->filter().text.trimmed().isEmpty());
    if (keep && selectIssue(keep)) return;
    if (m_model->rowCount() == 0) m_model->fetchMore({});
    if (m_model->rowCount() > 0)
        m_table->setCurrentIndex(m_model->index(0, 0));
    else
        showIssue(0);
}

void IssueBrowser::setSearchText(const QString& text)
{
    m_search->setText(text);
    applyFilter();
}

bool IssueBrowser::setFilterValue(Filter filter, const QString& value)
{
    const int i = m_filters[filter]->findData(value);
    if (i < 0) return false;
    m_filters[filter]->setCurrentIndex(i);
    return true;
}

bool IssueBrowser::selectIssue(qint64 id)
{
    const int row = m_model->rowOfId(id);
    if (row < 0) return false;
    const QModelIndex index = m_model->index(row, 0);
    m_table->setCurrentIndex(index);
    m_table->scrollTo(index);
    return true;
}

void IssueBrowser::showIssue(qint64 id)
{
    m_currentId = id;
    const std::optional<IssueRecord> found =
        id ? m_corpus.record(id, m_search->text()) : std::nullopt;
    if (!found) {
        if (!m_corpus.isOpen() && !m_corpus.error().isEmpty()) return showCorpusError();
        if (m_model->matchCount() == 0 && m_corpus.count(QStringLiteral("study")) > 0) {
            const QString words = m_search->text().trimmed();
            QStringList related;
            if (!words.isEmpty())
                for (const QString& leaf : IssueCorpus::relatedLeaves(words))
                    related << nodeLink(leaf);
            m_detail->setHtml(
                tr("<h3>No issue matches</h3><p>%1No issue has any of the words (as a word or "
                   "the start of one) in its title, text, labels or link while every filter "
                   "holds. The study records labels and links, not the text of its issues: try "
                   "other words, or clear a filter.</p>%2")
                    .arg(words.isEmpty() ? QString()
                                         : tr("Searched for <b>%1</b>. ").arg(esc(words)),
                         related.isEmpty()
                             ? QString()
                             : tr("<p>Leaves these words are most likely about: %1</p>")
                                   .arg(related.join(QLatin1String(", ")))));
            return;
        }
        m_detail->setHtml(
            tr("<h3>Issues</h3><p>The study's %1 labelled fault issues and %2 how-to questions, "
               "and the reports you import. Search and filter on the left; select an issue to "
               "read it here.</p>")
                .arg(m_corpus.count(QStringLiteral("study")))
                .arg(m_corpus.howToQuestionCount()));
        return;
    }
    const IssueRecord& r = *found;
    QString html;
    html += QStringLiteral("<h3>%1</h3>")
                .arg(esc(r.title.isEmpty() ? IssueCorpus::shortReference(r.link) : r.title));
    html += QStringLiteral("<p><a href=\"%1\">%2</a></p>").arg(esc(r.link), esc(r.link));
    html += QStringLiteral("<table cellspacing=\"2\">");
    const auto row = [&html](const QString& key, const QString& value) {
        if (!value.isEmpty())
            html += QStringLiteral("<tr><td><i>%1</i>&nbsp;</td><td>%2</td></tr>").arg(key, value);
    };
    row(tr("Kind"), esc(originName(r.origin)));
    row(tr("Source"), esc(r.source));
    row(tr("Framework"), esc(r.frameworks.join(QLatin1String(", "))));
    if (r.distributedSpecific)
        row(tr("Distributed-specific"), *r.distributedSpecific ? tr("yes") : tr("no"));
    row(tr("Labels"), esc(r.labels.join(QLatin1String(", "))));
    html += QStringLiteral("</table>");

    if (!r.studyLabels.isEmpty()) {
        html += tr("<h4>Study labels</h4><ul>");
        for (const IssueLabel& l : r.studyLabels) {
            QStringList path{esc(l.stage)};
            if (!l.innerCategory.isEmpty()) path << esc(l.innerCategory);
            path << QStringLiteral("<a href=\"node:%1\">%2</a>").arg(esc(l.symptom), esc(l.leaf));
            QStringList fixes;
            for (const QString& p : Taxonomy::instance().fixPatternIdsOfLabel(l.fixLabel))
                fixes << (Taxonomy::instance().walkthrough(p)
                              ? QStringLiteral("<a href=\"walkthrough:%1\">%2</a>")
                                    .arg(esc(p), esc(IssueTableModel::fixPatternLabel(p)))
                              : esc(IssueTableModel::fixPatternLabel(p)));
            html += QStringLiteral("<li>%1<br/>%2 %3</li>")
                        .arg(path.join(QStringLiteral(" › ")), tr("fixed by:"),
                             fixes.isEmpty() ? esc(l.fixLabel) : fixes.join(QLatin1String(", ")));
        }
        html += QStringLiteral("</ul>");
    }
    if (!r.howTo.isEmpty()) {
        html += tr("<h4>How-to topic</h4><ul>");
        for (const QString& h : r.howTo)
            html += QStringLiteral("<li>%1</li>").arg(esc(h));
        html += QStringLiteral("</ul>");
    }
    if (!r.candidates.isEmpty()) {
        html += tr("<h4>Classified as</h4><p>Ranked by the symptom classifier when imported "
                   "(not a study label).</p><ol>");
        for (const IssueCandidate& c : r.candidates)
            html += QStringLiteral("<li>%1 <small>(%2)</small></li>")
                        .arg(nodeLink(c.symptom), probabilityText(c.score));
        html += QStringLiteral("</ol>");
    }
    if (!r.snippet.isEmpty())
        html += tr("<h4>Match</h4><p>%1</p>").arg(IssueTableModel::snippetHtml(r.snippet));
    if (!r.body.isEmpty()) {
        QString body = r.body.left(kMaxBodyChars);
        html += tr("<h4>Text</h4><pre style=\"white-space: pre-wrap\">%1%2</pre>")
                    .arg(esc(body),
                         r.body.size() > kMaxBodyChars
                             ? tr("\n… (%1 more characters)").arg(r.body.size() - kMaxBodyChars)
                             : QString());
    } else if (r.origin != QLatin1String("import")) {
        html += tr("<p><i>The study records the labels and the link of this issue, not its "
                   "text: open the link to read it.</i></p>");
    }
    m_detail->setHtml(html);
}

void IssueBrowser::onLink(const QUrl& url)
{
    if (url.scheme() == QLatin1String("node"))
        Q_EMIT nodeRequested(url.path());
    else if (url.scheme() == QLatin1String("walkthrough"))
        Q_EMIT walkthroughRequested(url.path());
    else
        QDesktopServices::openUrl(url);
}

void IssueBrowser::classifyText(const QString& text)
{
    const int generation = ++m_classifyGeneration;
    m_classifyButton->setEnabled(false);
    m_classifyButton->setText(tr("Classifying…"));
    // A large paste takes a while: the classifier runs on the pool, the newest request wins.
    m_classifyWatcher.setProperty("generation", generation);
    m_classifyWatcher.setFuture(QtConcurrent::run(
        [bytes = text.toUtf8()] { return SymptomClassifier::instance().classify(bytes); }));
}

void IssueBrowser::chooseImport(bool folder)
{
    const QString path =
        folder ? QFileDialog::getExistingDirectory(this, tr("Import a Folder of Reports"))
               : QFileDialog::getOpenFileName(
                     this, tr("Import Issues"), {},
                     tr("Issues (*.json *.md *.txt);;GitHub issue JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) importPath(path);
}

bool IssueBrowser::importPath(const QString& path)
{
    if (!m_corpus.isOpen() || !m_importer->start(m_corpus.path(), path)) return false;
    setImporting(true);
    m_status->setText(tr("Importing %1…").arg(path));
    return true;
}

void IssueBrowser::setImporting(bool importing)
{
    m_importProgress->setVisible(importing);
    m_cancelImport->setVisible(importing);
    m_importButton->setEnabled(!importing && m_corpus.isOpen());
    if (importing) m_importProgress->setRange(0, 0);
}

void IssueBrowser::onImported(int count, const QStringList& skipped)
{
    setImporting(false);
    const QString imported = countText(count, tr("Imported %1 issue"), tr("Imported %1 issues"));
    m_status->setText(skipped.isEmpty()
                          ? imported + u'.'
                          : tr("%1; skipped %2").arg(imported, skipped.join(QLatin1String("; "))));
    // A re-imported report may come back under the id of the copy it replaced.
    m_model->refresh();
    fillFilters();
    // Show what was just added.
    {
        const QSignalBlocker quiet(m_search);
        m_search->clear();
    }
    for (QComboBox* combo : m_filters) {
        const QSignalBlocker quiet(combo);
        combo->setCurrentIndex(0);
    }
    const QSignalBlocker quiet(m_filters[SourceFilter]);
    setFilterValue(SourceFilter, IssueCorpus::kImportedSource);
    m_currentId = 0;
    applyFilter();
}

QByteArray IssueBrowser::saveState() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    const QHeaderView* header = m_table->horizontalHeader();
    s << m_split->saveState() << m_rightSplit->saveState() << qint32(header->sortIndicatorSection())
      << qint32(header->sortIndicatorOrder());
    return out;
}

void IssueBrowser::restoreState(const QByteArray& state)
{
    QDataStream s(state);
    QByteArray a, b;
    qint32 sortColumn = -1, sortOrder = Qt::AscendingOrder;
    s >> a >> b;
    if (s.status() != QDataStream::Ok) return;
    m_sized = true;
    m_split->restoreState(a);
    m_rightSplit->restoreState(b);
    s >> sortColumn >> sortOrder; // absent from states saved before the table sorted
    if (s.status() != QDataStream::Ok || sortColumn >= IssueTableModel::ColumnCount) return;
    m_table->sortByColumn(sortColumn, sortOrder == Qt::DescendingOrder ? Qt::DescendingOrder
                                                                       : Qt::AscendingOrder);
}

} // namespace rankscope
