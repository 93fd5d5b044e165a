#include "views/walkthrough/walkthroughpanel.h"

#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"

#include <QAction>
#include <QButtonGroup>
#include <QComboBox>
#include <QDataStream>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QIODevice>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <utility>

namespace rankscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

const StepStatus kStatuses[] = {StepStatus::ToDo, StepStatus::Done, StepStatus::Skipped,
                                StepStatus::Failed};

QString statusMark(StepStatus s)
{
    switch (s) {
    case StepStatus::ToDo:
        return QStringLiteral("○");
    case StepStatus::Done:
        return QStringLiteral("✔");
    case StepStatus::Skipped:
        return QStringLiteral("⤼");
    case StepStatus::Failed:
        return QStringLiteral("✘");
    }
    return {};
}

const QString kFrameworkKey = QStringLiteral("walkthrough/framework");

} // namespace

WalkthroughPanel::WalkthroughPanel(QWidget* parent) : QWidget(parent)
{
    m_patternBox = new QComboBox(this);
    m_patternBox->setObjectName(QStringLiteral("walkthroughPattern"));
    m_patternBox->addItem(tr("Choose a fix pattern…"), QString());
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs())
        m_patternBox->addItem(w.title, w.patternId);
    m_patternBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_patternBox->setMinimumContentsLength(20);

    m_frameworkBox = new QComboBox(this);
    m_frameworkBox->setObjectName(QStringLiteral("walkthroughFramework"));
    m_frameworkBox->addItem(QStringLiteral("PyTorch"), QStringLiteral("pytorch"));
    m_frameworkBox->addItem(QStringLiteral("Horovod"), QStringLiteral("horovod"));
    m_frameworkBox->addItem(QStringLiteral("TensorFlow"), QStringLiteral("tensorflow"));
    const int fw = m_frameworkBox->findData(QSettings().value(kFrameworkKey).toString());
    m_frameworkBox->setCurrentIndex(fw < 0 ? 0 : fw);

    m_summary = new QLabel(this);
    m_alternativesLabel = new QLabel(this);
    m_alternativesLabel->setObjectName(QStringLiteral("walkthroughAlternatives"));
    m_alternativesLabel->setWordWrap(true);
    m_alternativesLabel->hide();
    connect(m_alternativesLabel, &QLabel::linkActivated, this, [this](const QString& link) {
        // Keep the list: the user is comparing the symptom's (or the finding's) checklists.
        open(link, m_symptomId);
    });
    m_reasonLabel = new QLabel(this);
    m_reasonLabel->setObjectName(QStringLiteral("walkthroughReason"));
    m_reasonLabel->setWordWrap(true);
    m_reasonLabel->hide();
    m_summary->setWordWrap(true);
    m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_summary->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_progressLabel = new QLabel(this);
    m_progressLabel->setObjectName(QStringLiteral("walkthroughProgress"));
    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(false);

    m_steps = new QListWidget(this);
    m_steps->setObjectName(QStringLiteral("walkthroughSteps"));
    m_steps->setWordWrap(true);

    m_detail = new QTextBrowser(this);
    m_detail->setObjectName(QStringLiteral("walkthroughStep"));
    m_detail->setOpenExternalLinks(true);

    m_autoCheck = new QLabel(this);
    m_autoCheck->setObjectName(QStringLiteral("walkthroughAutoCheck"));
    m_autoCheck->setWordWrap(true);
    m_autoCheck->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_autoCheck->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    // A check's evidence runs to many lines: they scroll in a few lines' height (fitAutoCheck)
    // and the step's instructions keep the pane, instead of being squeezed to a few lines.
    m_autoCheckArea = new QScrollArea(this);
    m_autoCheckArea->setObjectName(QStringLiteral("walkthroughAutoCheckArea"));
    m_autoCheckArea->setWidget(m_autoCheck);
    m_autoCheckArea->setWidgetResizable(true);
    m_autoCheckArea->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_autoCheckArea->setFrameShape(QFrame::StyledPanel);
    m_autoCheckArea->installEventFilter(this);

    m_statusGroup = new QButtonGroup(this);
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(new QLabel(tr("Status:"), this));
    for (StepStatus s : kStatuses) {
        auto* b = new QToolButton(this);
        b->setText(statusMark(s) + QLatin1Char(' ') + stepStatusLabel(s));
        b->setCheckable(true);
        b->setAutoRaise(false);
        b->setObjectName(QStringLiteral("status-") + stepStatusKey(s));
        m_statusGroup->addButton(b, int(s));
        statusRow->addWidget(b);
    }
    statusRow->addStretch(1);

    m_note = new QPlainTextEdit(this);
    m_note->setObjectName(QStringLiteral("walkthroughNote"));
    m_note->setPlaceholderText(tr("Notes on this step: what you ran, what you saw…"));
    m_noteTimer = new QTimer(this);
    m_noteTimer->setSingleShot(true);
    m_noteTimer->setInterval(600);

    m_prev = new QPushButton(tr("‹ Previous"), this);
    m_next = new QPushButton(tr("Next ›"), this);
    auto* navRow = new QHBoxLayout;
    navRow->addWidget(m_prev);
    navRow->addStretch(1);
    navRow->addWidget(m_next);

    auto* stepPane = new QWidget(this);
    auto* stepLayout = new QVBoxLayout(stepPane);
    stepLayout->setContentsMargins(0, 0, 0, 0);
    stepLayout->addWidget(m_detail, 3);
    stepLayout->addWidget(m_autoCheckArea);
    stepLayout->addLayout(statusRow);
    stepLayout->addWidget(new QLabel(tr("Note:"), this));
    stepLayout->addWidget(m_note, 1);
    stepLayout->addLayout(navRow);

    m_split = new QSplitter(Qt::Vertical, this);
    m_split->addWidget(m_steps);
    m_split->addWidget(stepPane);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 3);

    auto* top = new QFormLayout;
    top->addRow(tr("Fix pattern:"), m_patternBox);
    top->addRow(tr("Framework:"), m_frameworkBox);
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progressLabel);
    progressRow->addWidget(m_progress, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(m_reasonLabel);
    layout->addWidget(m_alternativesLabel);
    layout->addLayout(progressRow);
    layout->addWidget(m_split, 100);
    layout->addStretch(1); // holds the hint at the top while no checklist is shown

    // Shortcuts act while focus is in the panel, so they do not steal keys elsewhere.
    const struct {
        QString name;
        QString text;
        QKeySequence key;
        std::function<void()> fn;
    } actions[] = {
        {QStringLiteral("actionStepPrevious"), tr("Previous step"),
         QKeySequence(Qt::ALT | Qt::Key_Up), [this] { previous(); }},
        {QStringLiteral("actionStepNext"), tr("Next step"), QKeySequence(Qt::ALT | Qt::Key_Down),
         [this] { next(); }},
        {QStringLiteral("actionStepDone"), tr("Mark step done"),
         QKeySequence(Qt::CTRL | Qt::Key_Return),
         [this] { setStepStatus(m_step, StepStatus::Done); }},
    };
    for (const auto& a : actions) {
        auto* action = new QAction(a.text, this);
        action->setObjectName(a.name);
        action->setShortcut(a.key);
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(action, &QAction::triggered, this, a.fn);
        addAction(action);
    }

    connect(m_patternBox, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) return;
        flush();
        m_step = 0;
        loadState();
        showAlternatives();
        if (m_store && m_investigationId > 0 && walkthrough())
            m_store->setCurrentStep(m_investigationId, patternId(), m_step);
    });
    connect(m_frameworkBox, &QComboBox::currentIndexChanged, this, [this] {
        QSettings().setValue(kFrameworkKey, framework());
        refreshStep();
    });
    connect(m_steps, &QListWidget::currentRowChanged, this, [this](int row) {
        if (!m_updating && row >= 0) setCurrentStep(row);
    });
    connect(m_statusGroup, &QButtonGroup::idClicked, this,
            [this](int id) { setStepStatus(m_step, StepStatus(id)); });
    connect(m_note, &QPlainTextEdit::textChanged, this, [this] {
        if (m_updating || !walkthrough()) return;
        adoptPrefill(m_step);
        m_state[m_step].note = m_note->toPlainText();
        m_noteStep = m_step;
        m_noteTimer->start();
    });
    connect(m_noteTimer, &QTimer::timeout, this, &WalkthroughPanel::flush);
    connect(m_prev, &QPushButton::clicked, this, &WalkthroughPanel::previous);
    connect(m_next, &QPushButton::clicked, this, &WalkthroughPanel::next);

    loadState();
}

WalkthroughPanel::~WalkthroughPanel()
{
    flush();
}

const Walkthrough* WalkthroughPanel::walkthrough() const
{
    return Taxonomy::instance().walkthrough(m_patternBox->currentData().toString());
}

QString WalkthroughPanel::patternId() const
{
    return walkthrough() ? walkthrough()->patternId : QString();
}

int WalkthroughPanel::stepCount() const
{
    return walkthrough() ? int(walkthrough()->steps.size()) : 0;
}

QString WalkthroughPanel::framework() const
{
    return m_frameworkBox->currentData().toString();
}

void WalkthroughPanel::setFramework(const QString& framework)
{
    const int i = m_frameworkBox->findData(framework.toLower());
    if (i >= 0) m_frameworkBox->setCurrentIndex(i);
}

QAbstractButton* WalkthroughPanel::statusButton(StepStatus status) const
{
    return m_statusGroup->button(int(status));
}

void WalkthroughPanel::setInvestigation(InvestigationStore* store, qint64 investigationId)
{
    flush();
    m_store = store;
    m_investigationId = store ? investigationId : -1;
    // Another folder: its own checklist where it has one, else none (never the previous
    // folder's).
    int index = 0;
    m_step = 0;
    if (m_store && m_investigationId > 0) {
        const auto [pattern, step] = m_store->currentStep(m_investigationId);
        const int i = pattern.isEmpty() ? -1 : m_patternBox->findData(pattern);
        if (i >= 0) {
            index = i;
            m_step = step;
        }
    }
    m_findingFixes.clear();
    m_reason.clear();
    m_symptomId.clear();
    m_updating = true;
    m_patternBox->setCurrentIndex(index);
    m_updating = false;
    showAlternatives();
    loadState();
}

bool WalkthroughPanel::openForSymptom(const QString& nodeId)
{
    const auto walkthroughs = Taxonomy::instance().walkthroughsForNode(nodeId);
    if (walkthroughs.empty()) return false;
    return openWalkthrough(walkthroughs.front()->patternId, nodeId);
}

bool WalkthroughPanel::openForFinding(const Finding& finding, const QString& patternId)
{
    QStringList fixes;
    for (const std::string& p : finding.fixPatterns)
        if (const QString id = QString::fromStdString(p); Taxonomy::instance().walkthrough(id))
            fixes << id;
    const QString symptom = QString::fromStdString(finding.symptom);
    if (fixes.isEmpty()) return openForSymptom(symptom);
    const QString target = patternId.isEmpty() ? fixes.front() : patternId;
    if (!fixes.contains(target)) return openWalkthrough(target, symptom);
    m_findingFixes = fixes;
    // The reason is about the finding's first fix, whichever of its fixes is open.
    m_reason = QString::fromStdString(finding.fixReason);
    if (!open(target, symptom)) return false;
    // The checklist opens at the step the evidence points at, where one stands out; the reason
    // speaks for the first fix only.
    QStringList failedChecks;
    for (auto it = m_checks.cbegin(); it != m_checks.cend(); ++it)
        if (it->outcome == AutoCheckOutcome::Failed) failedChecks << it.key();
    const int step = stepForEvidence(*walkthrough(), failedChecks,
                                     target == fixes.front() ? m_reason : QString(),
                                     Taxonomy::instance().walkthroughs());
    if (step >= 0) setCurrentStep(step);
    return true;
}

void WalkthroughPanel::showAlternatives()
{
    m_alternatives.clear();
    QStringList links;
    const auto link = [&](const Walkthrough* w) {
        if (!w || w->patternId == patternId()) return;
        m_alternatives << w->patternId;
        links << QStringLiteral("<a href=\"%1\">%2</a>").arg(esc(w->patternId), esc(w->title));
    };
    if (!m_findingFixes.isEmpty()) {
        // The finding's own fixes: the study's other fixes for its leaf may not fit its evidence.
        for (const QString& id : m_findingFixes)
            link(Taxonomy::instance().walkthrough(id));
        m_alternativesLabel->setText(
            links.isEmpty()
                ? QString()
                : tr("Other fixes for this finding: %1").arg(links.join(QStringLiteral(" · "))));
    } else {
        for (const Walkthrough* w : Taxonomy::instance().walkthroughsForNode(m_symptomId))
            link(w);
        const TaxonomyNode* node = Taxonomy::instance().node(m_symptomId);
        m_alternativesLabel->setText(links.isEmpty()
                                         ? QString()
                                         : tr("Also fixed “%1”: %2")
                                               .arg(esc(node ? node->name : m_symptomId),
                                                    links.join(QStringLiteral(" · "))));
    }
    m_alternativesLabel->setVisible(!links.isEmpty());
    const bool why =
        !m_findingFixes.isEmpty() && !m_reason.isEmpty() && patternId() == m_findingFixes.front();
    m_reasonLabel->setText(why ? tr("<b>Why this fix:</b> %1").arg(esc(m_reason)) : QString());
    m_reasonLabel->setVisible(why);
}

bool WalkthroughPanel::openWalkthrough(const QString& pattern, const QString& symptomId)
{
    m_findingFixes.clear();
    m_reason.clear();
    return open(pattern, symptomId);
}

bool WalkthroughPanel::open(const QString& pattern, const QString& symptomId)
{
    const int i = m_patternBox->findData(pattern);
    if (i <= 0) return false;
    m_symptomId = symptomId;
    if (i != m_patternBox->currentIndex()) m_patternBox->setCurrentIndex(i);
    showAlternatives();
    fitStepList(); // again: the other patterns' links above the steps took some of the height
    return true;
}

void WalkthroughPanel::loadState()
{
    m_state.clear();
    m_noteStep = -1;
    if (m_store && m_investigationId > 0 && walkthrough())
        m_state = m_store->checklist(m_investigationId, patternId());
    m_step = std::clamp(m_step, 0, std::max(0, stepCount() - 1));
    refreshList();
    refreshStep();
    refreshProgress();
    fitStepList();
    Q_EMIT stateChanged();
}

void WalkthroughPanel::fitStepList()
{
    // A checklist opens with all its steps in view where the panel has room: in a narrow dock
    // the wrapped titles would otherwise push the last steps behind a scroll bar. The list
    // only grows (to half the panel at most), so a split the user made larger stays.
    if (!isVisible() || m_steps->count() == 0) return;
    layout()->activate(); // the splitter gets its real height first
    // The laid-out rows, wrapped at the list's width (sizeHintForRow would not wrap them).
    const QRect first = m_steps->visualItemRect(m_steps->item(0));
    const QRect last = m_steps->visualItemRect(m_steps->item(m_steps->count() - 1));
    const int needed = last.bottom() - first.top() + 1 + 2 * m_steps->frameWidth();
    const QList<int> sizes = m_split->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    const int list = std::min(needed, total / 2);
    if (sizes.value(0) < list) m_split->setSizes({list, total - list});
}

void WalkthroughPanel::saveStep(int step)
{
    if (!m_store || m_investigationId <= 0 || !walkthrough()) return;
    const StepState s = m_state.value(step);
    m_store->setStepState(m_investigationId, patternId(), step, s.status, s.note);
}

void WalkthroughPanel::flush()
{
    m_noteTimer->stop();
    if (m_noteStep < 0) return;
    saveStep(m_noteStep);
    m_noteStep = -1;
}

void WalkthroughPanel::setCurrentStep(int step)
{
    if (step < 0 || step >= stepCount()) return;
    flush();
    m_step = step;
    if (m_store && m_investigationId > 0)
        m_store->setCurrentStep(m_investigationId, patternId(), step);
    m_updating = true;
    m_steps->setCurrentRow(step);
    m_updating = false;
    refreshStep();
}

void WalkthroughPanel::next()
{
    setCurrentStep(m_step + 1);
}

void WalkthroughPanel::previous()
{
    setCurrentStep(m_step - 1);
}

void WalkthroughPanel::setStepStatus(int step, StepStatus status)
{
    if (step < 0 || step >= stepCount()) return;
    if (step == m_noteStep) flush();
    m_state[step].status = status;
    saveStep(step);
    refreshList();
    if (step == m_step) refreshStep();
    refreshProgress();
    Q_EMIT stateChanged();
}

void WalkthroughPanel::setStepNote(int step, const QString& note)
{
    if (step < 0 || step >= stepCount()) return;
    adoptPrefill(step);
    m_state[step].note = note;
    saveStep(step);
    if (step == m_step) refreshStep();
    Q_EMIT stateChanged();
}

int WalkthroughPanel::doneCount() const
{
    int done = 0;
    for (int i = 0; i < stepCount(); ++i)
        done += stepStatus(i) == StepStatus::Done ? 1 : 0;
    return done;
}

QString WalkthroughPanel::progressText() const
{
    return tr("%1 of %2 done").arg(doneCount()).arg(stepCount());
}

void WalkthroughPanel::setAutoCheckResult(const QString& checkId, AutoCheckOutcome outcome,
                                          const QString& evidence)
{
    m_checks.insert(checkId, {outcome, evidence});
    refreshList();
    refreshStep();
}

void WalkthroughPanel::setAutoCheckResults(const std::vector<AutoCheckResult>& results)
{
    m_checks.clear();
    // The box sits above the status buttons: a few short lines, so the step's text keeps room.
    constexpr int kLines = 2;
    constexpr int kChars = 100;
    for (const AutoCheckResult& r : results) {
        AutoCheckResult brief = r;
        brief.evidence.resize(std::min<std::size_t>(r.evidence.size(), kLines));
        for (Evidence& e : brief.evidence)
            if (e.text.size() > std::size_t(kChars)) e.text = e.text.substr(0, kChars) + "…";
        QString text = brief.evidenceText();
        if (r.evidence.size() > brief.evidence.size())
            text += tr("\n(%1 more in the exported report)")
                        .arg(r.evidence.size() - brief.evidence.size());
        m_checks.insert(r.checkId, {r.outcome, text});
    }
    refreshList();
    refreshStep();
    refreshProgress();
    Q_EMIT stateChanged();
}

void WalkthroughPanel::clearAutoCheckResults()
{
    m_checks.clear();
    refreshList();
    refreshStep();
    refreshProgress();
}

std::optional<StepStatus> WalkthroughPanel::prefill(int step) const
{
    const Walkthrough* w = walkthrough();
    if (!w || step < 0 || step >= int(w->steps.size())) return std::nullopt;
    const QString& check = w->steps[size_t(step)].autoCheck;
    if (check.isEmpty() || !m_checks.contains(check)) return std::nullopt;
    return suggestedStepStatus(m_checks.value(check).outcome);
}

bool WalkthroughPanel::isStepPrefilled(int step) const
{
    return !m_state.contains(step) && prefill(step).has_value();
}

StepStatus WalkthroughPanel::stepStatus(int step) const
{
    if (m_state.contains(step)) return m_state.value(step).status;
    return prefill(step).value_or(StepStatus::ToDo);
}

void WalkthroughPanel::adoptPrefill(int step)
{
    if (!m_state.contains(step)) m_state[step].status = stepStatus(step);
}

void WalkthroughPanel::refreshList()
{
    const Walkthrough* w = walkthrough();
    m_updating = true;
    m_steps->clear();
    if (w)
        for (int i = 0; i < int(w->steps.size()); ++i) {
            const WalkthroughStep& s = w->steps[size_t(i)];
            QString text =
                QStringLiteral("%1  %2. %3").arg(statusMark(stepStatus(i))).arg(i + 1).arg(s.title);
            if (!s.autoCheck.isEmpty() && m_checks.contains(s.autoCheck)) {
                const AutoCheckOutcome o = m_checks.value(s.autoCheck).outcome;
                text += o == AutoCheckOutcome::Passed   ? tr("  [check passed]")
                        : o == AutoCheckOutcome::Failed ? tr("  [check failed]")
                                                        : tr("  [check undecided]");
            }
            auto* item = new QListWidgetItem(text, m_steps);
            item->setToolTip(isStepPrefilled(i)
                                 ? tr("%1 (from the auto-check; set a status to override)")
                                       .arg(stepStatusLabel(stepStatus(i)))
                                 : stepStatusLabel(stepStatus(i)));
        }
    m_steps->setCurrentRow(w ? m_step : -1);
    m_updating = false;
}

void WalkthroughPanel::refreshStep()
{
    const Walkthrough* w = walkthrough();
    m_updating = true;
    const bool have = w && m_step < int(w->steps.size());
    // Without a checklist only the hint and the pickers make sense.
    m_split->setVisible(have);
    m_progressLabel->setVisible(have);
    m_progress->setVisible(have);
    m_summary->setWordWrap(!have); // a one-line title, or the longer hint
    for (QAbstractButton* b : m_statusGroup->buttons())
        b->setEnabled(have);
    m_note->setEnabled(have);
    m_prev->setEnabled(have && m_step > 0);
    m_next->setEnabled(have && m_step + 1 < int(w->steps.size()));
    if (!have) {
        m_summary->setText(
            w ? w->summary
              : tr("Pick a fix pattern, or use “Walkthrough” on a symptom in the Taxonomy tab."));
        m_detail->clear();
        m_note->clear();
        m_autoCheckArea->hide();
        m_updating = false;
        return;
    }
    // The pattern's summary goes in the scrolling page: a wrapped label in a dock gets cut off.
    m_summary->setText(QStringLiteral("<b>%1</b>").arg(esc(w->title)));
    m_summary->setToolTip(w->summary);
    const WalkthroughStep& s = w->steps[size_t(m_step)];
    QString html =
        QStringLiteral("<p><i>%1</i></p>").arg(esc(w->summary)) +
        tr("<h3>Step %1 of %2: %3</h3>").arg(m_step + 1).arg(w->steps.size()).arg(esc(s.title));
    if (!s.why.isEmpty()) html += tr("<p><b>Why:</b> %1</p>").arg(esc(s.why));
    if (!s.how.isEmpty()) html += tr("<p><b>How:</b> %1</p>").arg(esc(s.how));
    const QString fw = framework();
    bool found = false;
    for (const FrameworkHow& f : s.byFramework)
        if (f.framework == fw) {
            html += tr("<p><b>In %1:</b></p><pre style=\"white-space: pre-wrap\">%2</pre>")
                        .arg(esc(m_frameworkBox->currentText()), esc(f.how));
            found = true;
        }
    if (!found && !s.byFramework.empty()) {
        QStringList others;
        for (const FrameworkHow& f : s.byFramework)
            others << f.framework;
        html +=
            tr("<p><i>No %1-specific instructions for this step (there are for: %2).</i></p>")
                .arg(esc(m_frameworkBox->currentText()), esc(others.join(QStringLiteral(", "))));
    }
    if (!s.good.isEmpty()) html += tr("<p><b>Good:</b> %1</p>").arg(esc(s.good));
    if (!s.bad.isEmpty()) html += tr("<p><b>Bad:</b> %1</p>").arg(esc(s.bad));
    m_detail->setHtml(html);

    if (s.autoCheck.isEmpty()) {
        m_autoCheckArea->hide();
    } else {
        const AutoCheck* check = Taxonomy::instance().autoCheck(s.autoCheck);
        QString text = tr("<b>Auto-check</b> <code>%1</code>: %2<br>")
                           .arg(esc(s.autoCheck), esc(check ? check->description : QString()));
        if (!m_checks.contains(s.autoCheck)) {
            text += tr("Not evaluated on this folder yet.");
        } else {
            const CheckResult r = m_checks.value(s.autoCheck);
            text += r.outcome == AutoCheckOutcome::Passed ? tr("<b>Passed</b>")
                    : r.outcome == AutoCheckOutcome::Failed
                        ? tr("<b>Failed</b>: the folder shows the problem this step addresses, "
                             "so the step is still to do")
                        : tr("<b>Undecided</b> (the folder lacks the facts it needs)");
            if (isStepPrefilled(m_step))
                text += tr(" — the step is pre-filled as “%1”; choose a status to override it.")
                            .arg(stepStatusLabel(stepStatus(m_step)));
            else if (prefill(m_step) && *prefill(m_step) != stepStatus(m_step))
                text += tr(" — you set “%1”.").arg(stepStatusLabel(stepStatus(m_step)));
            if (!r.evidence.isEmpty())
                text += QStringLiteral("<pre style=\"white-space: pre-wrap\">%1</pre>")
                            .arg(esc(r.evidence));
        }
        m_autoCheck->setText(text);
        m_autoCheckArea->show();
        fitAutoCheck();
    }
    const StepState st = m_state.value(m_step);
    statusButton(stepStatus(m_step))->setChecked(true);
    if (m_note->toPlainText() != st.note) m_note->setPlainText(st.note);
    m_updating = false;
}

void WalkthroughPanel::refreshProgress()
{
    m_progressLabel->setText(progressText());
    m_progress->setRange(0, std::max(1, stepCount()));
    m_progress->setValue(doneCount());
}

QByteArray WalkthroughPanel::saveState() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    s << m_split->saveState();
    return out;
}

void WalkthroughPanel::fitAutoCheck()
{
    const int frame = 2 * m_autoCheckArea->frameWidth();
    const int text = m_autoCheck->heightForWidth(m_autoCheckArea->width() - frame);
    m_autoCheckArea->setFixedHeight(std::min(text, fontMetrics().lineSpacing() * kAutoCheckLines) +
                                    frame);
}

bool WalkthroughPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_autoCheckArea && event->type() == QEvent::Resize) fitAutoCheck();
    return QWidget::eventFilter(watched, event);
}

void WalkthroughPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_pendingState.isEmpty()) {
        layout()->activate(); // the splitters get their real size before the sizes are applied
        restoreState(std::exchange(m_pendingState, {}));
    }
}

void WalkthroughPanel::restoreState(const QByteArray& state)
{
    if (!isVisible()) {
        m_pendingState = state;
        return;
    }
    QDataStream s(state);
    QByteArray split;
    s >> split;
    if (s.status() == QDataStream::Ok) m_split->restoreState(split);
}

} // namespace rankscope
