#include "views/findings/findingspanel.h"

#include "model/analysis/sessionanalysis.h"
#include "model/kb/taxonomy.h"
#include "views/findings/findingsmodel.h"
#include "views/logviewer/logviewer.h"
#include "views/timeline/timelineview.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractTextDocumentLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace rankscope {

namespace {

QString patternTitle(const QString& id)
{
    if (const Walkthrough* w = Taxonomy::instance().walkthrough(id)) return w->title;
    if (const FixPattern* p = Taxonomy::instance().fixPattern(id)) return p->name;
    return id;
}

QString evidenceText(const Evidence& e)
{
    QString where = QString::fromStdString(e.path);
    if (e.line > 0) where += QStringLiteral(":%1").arg(e.line);
    const QString rank = e.rank >= 0 ? QObject::tr("rank %1 ").arg(e.rank) : QString();
    return QStringLiteral("%1%2 — %3")
        .arg(rank, where, QString::fromStdString(e.text).simplified());
}

} // namespace

FindingsPanel::FindingsPanel(QWidget* parent) : QWidget(parent), m_model(new FindingsModel(this))
{
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("findingsTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(FindingsModel::SummaryColumn,
                                                      QHeaderView::Stretch);
    // Leaf names run long ("unexpected intermediate result"): sized to be read, elided past
    // that (the tool tip has the whole id), so the summary keeps room in a narrow dock.
    m_table->horizontalHeader()->setSectionResizeMode(FindingsModel::SymptomColumn,
                                                      QHeaderView::Interactive);
    m_table->horizontalHeader()->resizeSection(FindingsModel::SymptomColumn,
                                               fontMetrics().averageCharWidth() * 18);
    m_table->horizontalHeader()->setMinimumSectionSize(fontMetrics().averageCharWidth() * 6);
    m_table->setTextElideMode(Qt::ElideRight);

    auto* detail = new QWidget(this);
    // A text browser, not a label: a long summary scrolls instead of being clipped in a short
    // dock, and the other fix patterns are links in it.
    m_summary = new QTextBrowser(detail);
    m_summary->setObjectName(QStringLiteral("findingSummary"));
    m_summary->setOpenLinks(false);
    m_summary->setFrameShape(QFrame::NoFrame);
    m_summary->setMinimumHeight(fontMetrics().height() * 4);
    // As tall as its text (fitSummary): the evidence follows it, and what neither needs is
    // left under the buttons, not inside either.
    connect(m_summary->document()->documentLayout(),
            &QAbstractTextDocumentLayout::documentSizeChanged, this, [this] { fitSummary(); });
    m_summary->installEventFilter(this);
    m_evidence = new QListWidget(detail);
    m_evidence->setObjectName(QStringLiteral("evidenceList"));
    m_evidence->setWordWrap(false);
    m_evidence->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    // As tall as its rows (fitEvidence), shorter only when the dock is: a finding cites a few
    // lines.
    m_evidence->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
    m_evidenceButton = new QPushButton(tr("Evidence"), detail);
    m_evidenceButton->setObjectName(QStringLiteral("evidenceButton"));
    m_evidenceButton->setToolTip(tr("Open the log viewer at the cited line"));
    m_timelineButton = new QPushButton(tr("Show on timeline"), detail);
    m_timelineButton->setObjectName(QStringLiteral("timelineButton"));
    m_fixButton = new QPushButton(tr("Fix it"), detail);
    m_fixButton->setObjectName(QStringLiteral("fixButton"));
    m_fixButton->setToolTip(tr("Open the checklist of the finding's top fix pattern"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_evidenceButton);
    buttons->addWidget(m_timelineButton);
    buttons->addWidget(m_fixButton);
    buttons->addStretch(1);
    auto* detailLayout = new QVBoxLayout(detail);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    detailLayout->addWidget(m_summary, 1);
    detailLayout->addWidget(new QLabel(tr("<b>Evidence</b>"), detail));
    detailLayout->addWidget(m_evidence);
    detailLayout->addLayout(buttons);
    detailLayout->addStretch(1);

    auto* symptoms = new QWidget(this);
    m_symptoms = new QListWidget(symptoms);
    m_symptoms->setObjectName(QStringLiteral("symptomList"));
    auto* symptomLayout = new QVBoxLayout(symptoms);
    symptomLayout->setContentsMargins(0, 0, 0, 0);
    symptomLayout->addWidget(new QLabel(tr("<b>Ranked symptoms</b>"), symptoms));
    symptomLayout->addWidget(m_symptoms, 1);

    m_split = new QSplitter(Qt::Vertical, this);
    m_split->addWidget(m_table);
    m_split->addWidget(detail);
    m_split->addWidget(symptoms);
    // A taller dock goes to the finding's detail (fitSplit sizes the other two).
    m_split->setStretchFactor(0, 0);
    m_split->setStretchFactor(1, 1);
    m_split->setStretchFactor(2, 0);
    m_split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_split);

    // The columns wider than a narrow dock: the scroll bar under the rows takes a row's height.
    connect(m_table->horizontalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
        if (std::exchange(m_tableScrolls, max > 0) != (max > 0)) fitSplit();
    });
    // Lines wider than the list: the scroll bar under them takes a row's height.
    connect(m_evidence->horizontalScrollBar(), &QScrollBar::rangeChanged, this,
            [this] { fitEvidence(); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this] { refreshDetail(); });
    connect(m_evidenceButton, &QPushButton::clicked, this, &FindingsPanel::showEvidence);
    connect(m_evidence, &QListWidget::itemActivated, this, [this] { showEvidence(); });
    connect(m_timelineButton, &QPushButton::clicked, this, &FindingsPanel::showOnTimeline);
    connect(m_fixButton, &QPushButton::clicked, this, &FindingsPanel::fixIt);
    connect(m_summary, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (openFix(url.toString())) Q_EMIT walkthroughShown();
    });
    refreshDetail();
}

void FindingsPanel::setSession(SessionPtr session, Diagnosis state)
{
    m_session = std::move(session);
    m_state = state;
    m_model->setSession(m_session);
    if (m_logViewer) m_logViewer->setSession(m_session);
    refreshSymptoms();
    if (m_model->rowCount() > 0)
        selectFinding(0);
    else
        refreshDetail();
    fitSplit();
}

void FindingsPanel::fitSplit()
{
    // Empty rows under two findings took the height the finding's summary scrolled for.
    const int table =
        m_table->horizontalHeader()->sizeHint().height() +
        std::clamp(m_model->rowCount(), 2, 6) * m_table->verticalHeader()->defaultSectionSize() +
        2 * m_table->frameWidth() +
        (m_tableScrolls ? m_table->horizontalScrollBar()->sizeHint().height() : 0);
    const int symptomRow =
        m_symptoms->count() > 0 ? m_symptoms->sizeHintForRow(0) : fontMetrics().height() + 2;
    // A scroll area's own minimum is taller than one row.
    m_symptoms->setMinimumHeight(symptomRow + 2 * m_symptoms->frameWidth());
    QWidget* symptoms = m_split->widget(2);
    const int symptomsHeight =
        symptoms->layout()->itemAt(0)->sizeHint().height() + symptoms->layout()->spacing() +
        std::clamp(m_symptoms->count(), 1, 4) * symptomRow + 2 * m_symptoms->frameWidth();
    const QList<int> sizes = m_split->sizes();
    const int total = std::max(sizes[0] + sizes[1] + sizes[2], height());
    m_split->setSizes({table, std::max(0, total - table - symptomsHeight), symptomsHeight});
}

void FindingsPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Before a folder is opened the lists are empty: as tall as a row or two, not the
    // splitter's even thirds of empty white. From the first folder on, setSession fits them
    // and a split the user dragged stays.
    if (!m_session) fitSplit();
}

bool FindingsPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_summary && event->type() == QEvent::Resize) fitSummary();
    return QWidget::eventFilter(watched, event);
}

void FindingsPanel::fitSummary()
{
    // The text's height at the whole width: laid out beside a scroll bar it is taller, and the
    // height fitted to that would drop the scroll bar and fit again, back and forth.
    const QMargins margins = m_summary->contentsMargins();
    const std::unique_ptr<QTextDocument> text(m_summary->document()->clone());
    text->setTextWidth(m_summary->width() - margins.left() - margins.right());
    const int height = int(std::ceil(text->size().height())) + margins.top() + margins.bottom();
    m_summary->setMaximumHeight(std::max(height, m_summary->minimumHeight()));
    // Where it fits, no scroll bar: one shown in a box that fits the text would stay.
    m_summary->setVerticalScrollBarPolicy(m_summary->height() >= height ? Qt::ScrollBarAlwaysOff
                                                                        : Qt::ScrollBarAsNeeded);
}

void FindingsPanel::fitEvidence()
{
    const int row =
        m_evidence->count() > 0 ? m_evidence->sizeHintForRow(0) : fontMetrics().height() + 2;
    const int rows = std::clamp(m_evidence->count(), 1, kEvidenceRowsShown);
    const QScrollBar* bar = m_evidence->horizontalScrollBar();
    const int height = rows * row + 2 * m_evidence->frameWidth() +
                       (bar->maximum() > 0 ? bar->sizeHint().height() : 0);
    m_evidence->setMinimumHeight(std::min(height, 2 * row + 2 * m_evidence->frameWidth()));
    m_evidence->setMaximumHeight(height);
}

void FindingsPanel::setTargets(LogViewer* logViewer, TimelineView* timeline,
                               WalkthroughPanel* walkthrough)
{
    m_logViewer = logViewer;
    m_timeline = timeline;
    m_walkthrough = walkthrough;
    if (m_logViewer) m_logViewer->setSession(m_session);
    refreshDetail();
}

QSize FindingsPanel::sizeHint() const
{
    return {fontMetrics().averageCharWidth() * 72, QWidget::sizeHint().height()};
}

const Finding* FindingsPanel::currentFinding() const
{
    return m_model->finding(m_table->currentIndex().row());
}

void FindingsPanel::selectFinding(int row)
{
    m_table->setCurrentIndex(m_model->index(row, 0));
    refreshDetail();
}

bool FindingsPanel::showEvidence()
{
    const Finding* f = currentFinding();
    if (!f || !m_logViewer) return false;
    const int selected = m_evidence->currentRow();
    const Evidence* target = nullptr;
    if (selected >= 0 && selected < int(f->evidence.size()) &&
        f->evidence[std::size_t(selected)].line > 0)
        target = &f->evidence[std::size_t(selected)];
    for (const Evidence& e : f->evidence)
        if (!target && e.line > 0) target = &e;
    if (!target) return false;
    if (!m_logViewer->openAt(QString::fromStdString(target->path), target->line, target->rank))
        return false;
    Q_EMIT logViewerShown();
    return true;
}

bool FindingsPanel::showOnTimeline()
{
    const Finding* f = currentFinding();
    if (!f || !m_timeline || f->startNs < 0 || f->endNs < f->startNs) return false;
    m_timeline->showRange(f->startNs, f->endNs, QList<int>(f->ranks.begin(), f->ranks.end()));
    Q_EMIT timelineShown();
    return true;
}

bool FindingsPanel::fixIt()
{
    const Finding* f = currentFinding();
    if (!f || !m_walkthrough || !m_walkthrough->openForFinding(*f)) return false;
    Q_EMIT walkthroughShown();
    return true;
}

bool FindingsPanel::openFix(const QString& patternId)
{
    const Finding* f = currentFinding();
    if (!f || !m_walkthrough) return false;
    return m_walkthrough->openForFinding(*f, patternId);
}

void FindingsPanel::refreshDetail()
{
    const Finding* f = currentFinding();
    // The one place the log viewer learns what is cited: the Logs tab shows the selected
    // finding's lines whether it is opened by Evidence or on its own.
    if (m_logViewer) m_logViewer->setCitations(f ? f->evidence : std::vector<Evidence>{});
    m_evidence->clear();
    if (!f) {
        const std::string unread = m_session ? nothingReadableReason(*m_session) : std::string();
        m_summary->setHtml(
            !m_session ? tr("Open a trace folder to see its findings.")
            : m_state == Diagnosis::Running
                ? tr("Diagnosing… the findings appear here when the analysis ends.")
            : m_state == Diagnosis::Cancelled
                ? tr("The diagnosis was cancelled: no findings. Open the folder again to "
                     "diagnose it.")
            : unread.empty() ? tr("No errors or warnings found.")
                             : tr("Nothing readable in this folder: %1.")
                                   .arg(QString::fromStdString(unread).toHtmlEscaped()));
        m_evidenceButton->setEnabled(false);
        m_timelineButton->setEnabled(false);
        m_fixButton->setEnabled(false);
        fitEvidence();
        return;
    }
    QString head = QStringLiteral("<b>%1 · %2</b>")
                       .arg(QString::fromStdString(f->id).toHtmlEscaped(),
                            FindingsModel::findingSymptom(*f).toHtmlEscaped());
    QStringList facts;
    if (const QString r = FindingsModel::ranksText(f->ranks); !r.isEmpty()) facts << r;
    if (!f->processGroup.empty())
        facts << tr("group %1").arg(QString::fromStdString(f->processGroup).toHtmlEscaped());
    if (f->seq >= 0) facts << tr("seq %1").arg(f->seq);
    // The trace's own step label, which need not be the program's count (a PyTorch 1.13
    // trace's ProfilerStep#2 can be the step its log calls step 3).
    if (f->step >= 0) facts << tr("ProfilerStep#%1").arg(f->step);
    if (!facts.isEmpty()) head += QStringLiteral(" — ") + facts.join(QStringLiteral(", "));
    QString html =
        head + QStringLiteral("<br>") + QString::fromStdString(f->summary).toHtmlEscaped();
    bool hasLogLine = false;
    for (const Evidence& e : f->evidence) {
        auto* item = new QListWidgetItem(evidenceText(e), m_evidence);
        item->setToolTip(QString::fromStdString(e.text));
        hasLogLine = hasLogLine || e.line > 0;
    }
    fitEvidence();
    m_evidenceButton->setEnabled(m_logViewer && hasLogLine);
    m_evidenceButton->setToolTip(hasLogLine ? tr("Open the log viewer at the cited line")
                                            : tr("This finding cites no log line"));
    const bool hasRange = f->startNs >= 0 && f->endNs >= f->startNs;
    m_timelineButton->setEnabled(m_timeline && hasRange);
    m_timelineButton->setToolTip(hasRange ? tr("Jump to the finding's time range and ranks")
                                          : tr("This finding has no time range on the traces"));
    m_fixButton->setEnabled(m_walkthrough && (!f->fixPatterns.empty() || !f->symptom.empty()));
    QStringList others;
    for (std::size_t i = 1; i < f->fixPatterns.size(); ++i) {
        const QString id = QString::fromStdString(f->fixPatterns[i]);
        others << QStringLiteral("<a href=\"%1\">%2</a>")
                      .arg(id.toHtmlEscaped(), patternTitle(id).toHtmlEscaped());
    }
    if (!f->fixPatterns.empty())
        m_fixButton->setToolTip(tr("Open the checklist: %1")
                                    .arg(patternTitle(QString::fromStdString(f->fixPatterns[0]))));
    if (!f->fixPatterns.empty() && !f->fixReason.empty())
        html += QStringLiteral("<p>") +
                tr("<b>Fix:</b> %1 — %2")
                    .arg(patternTitle(QString::fromStdString(f->fixPatterns[0])).toHtmlEscaped(),
                         QString::fromStdString(f->fixReason).toHtmlEscaped()) +
                QStringLiteral("</p>");
    if (!others.isEmpty())
        html += QStringLiteral("<p>") +
                tr("Other fixes: %1").arg(others.join(QStringLiteral(" · "))) +
                QStringLiteral("</p>");
    m_summary->setHtml(html);
}

void FindingsPanel::refreshSymptoms()
{
    m_symptoms->clear();
    if (!m_session) return;
    for (const SymptomScore& s : m_session->analysis.symptoms) {
        auto* item = new QListWidgetItem(QStringLiteral("%1  %2")
                                             .arg(s.score, 0, 'f', 2)
                                             .arg(FindingsModel::symptomName(s.symptom)),
                                         m_symptoms);
        item->setToolTip(QString::fromStdString(s.symptom));
    }
}

} // namespace rankscope
