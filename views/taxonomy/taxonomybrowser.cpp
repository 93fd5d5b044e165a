#include "views/taxonomy/taxonomybrowser.h"

#include "model/kb/signatureset.h"
#include "model/kb/taxonomy.h"
#include "views/charts/chartstyle.h"
#include "views/counttext.h"
#include "views/taxonomy/taxonomyfilterproxy.h"
#include "views/taxonomy/taxonomymodel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QDataStream>
#include <QDesktopServices>
#include <QEvent>
#include <QFontMetrics>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QIODevice>
#include <QLineEdit>
#include <QRegularExpression>
#include <QResizeEvent>
#include <QSet>
#include <QSplitter>
#include <QTextBrowser>
#include <QToolTip>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <utility>

namespace rankscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QSet<QString> stems(const QString& text)
{
    static const QSet<QString> stop{QStringLiteral("other"), QStringLiteral("usage"),
                                    QStringLiteral("with"),  QStringLiteral("from"),
                                    QStringLiteral("that"),  QStringLiteral("this"),
                                    QStringLiteral("when"),  QStringLiteral("into")};
    static const QRegularExpression nonWord(QStringLiteral("[^a-z0-9]+"));
    QSet<QString> out;
    for (const QString& w : text.toLower().split(nonWord, Qt::SkipEmptyParts))
        if (w.size() >= 4 && !stop.contains(w)) out.insert(w.left(6));
    return out;
}

QString kindName(TaxonomyNode::Kind kind)
{
    switch (kind) {
    case TaxonomyNode::Kind::Stage:
        return QStringLiteral("Stage");
    case TaxonomyNode::Kind::Inner:
        return QStringLiteral("Category");
    case TaxonomyNode::Kind::Leaf:
        return QStringLiteral("Symptom");
    }
    return {};
}

} // namespace

TaxonomyBrowser::TaxonomyBrowser(QWidget* parent)
    : QWidget(parent), m_model(new TaxonomyModel(this)), m_proxy(new TaxonomyFilterProxy(this))
{
    m_proxy->setSourceModel(m_model);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("taxonomyFilter"));
    m_filter->setPlaceholderText(tr("Filter symptoms, messages…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterText(text);
        if (!text.trimmed().isEmpty()) m_tree->expandAll();
    });

    m_tree = new QTreeView(this);
    m_tree->setObjectName(QStringLiteral("taxonomyTree"));
    m_tree->setModel(m_proxy);
    m_tree->setUniformRowHeights(true);
    m_tree->setSortingEnabled(false);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(TaxonomyModel::NameColumn, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(TaxonomyModel::IssuesColumn,
                                           QHeaderView::ResizeToContents);
    m_tree->header()->setSectionResizeMode(TaxonomyModel::ShareColumn,
                                           QHeaderView::ResizeToContents);
    m_tree->expandToDepth(0);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                showNode(m_model->nodeAt(m_proxy->mapToSource(current.siblingAtColumn(0))));
            });

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_filter);
    leftLayout->addWidget(m_tree);

    m_detail = new QTextBrowser(this);
    m_detail->setObjectName(QStringLiteral("taxonomyDetail"));
    m_detail->setOpenLinks(false);
    connect(m_detail, &QTextBrowser::anchorClicked, this, &TaxonomyBrowser::onLink);

    m_chart = new QChart;
    m_chart->legend()->hide();
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setObjectName(QStringLiteral("fixPatternChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(fontMetrics().height() * 8);
    m_chartView->installEventFilter(this);
    styleChart();

    m_detailSplit = new QSplitter(Qt::Vertical, this);
    m_detailSplit->addWidget(m_detail);
    m_detailSplit->addWidget(m_chartView);
    m_detailSplit->setStretchFactor(0, 3);
    m_detailSplit->setStretchFactor(1, 2);

    m_split = new QSplitter(Qt::Horizontal, this);
    m_split->addWidget(left);
    m_split->addWidget(m_detailSplit);
    m_split->setStretchFactor(0, 2);
    m_split->setStretchFactor(1, 3);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_split);

    showNode(nullptr);
}

void TaxonomyBrowser::setFilterText(const QString& text)
{
    m_filter->setText(text);
}

bool TaxonomyBrowser::selectNode(const QString& id)
{
    QModelIndex index = m_proxy->mapFromSource(m_model->indexOfNode(id));
    if (!index.isValid() && m_model->indexOfNode(id).isValid()) {
        m_filter->clear(); // the filter hid it
        index = m_proxy->mapFromSource(m_model->indexOfNode(id));
    }
    if (!index.isValid()) return false;
    m_tree->scrollTo(index);
    m_tree->setCurrentIndex(index);
    return true;
}

QStringList TaxonomyBrowser::relatedHowToIds(const TaxonomyNode& node, int limit)
{
    const Taxonomy& t = Taxonomy::instance();
    QString text = node.name + QLatin1Char(' ') + node.description.summary + QLatin1Char(' ') +
                   node.description.symptoms + QLatin1Char(' ') + node.description.cause;
    for (const TaxonomyNode* p = t.node(node.parentId); p; p = t.node(p->parentId))
        text += QLatin1Char(' ') + p->name;
    const QSet<QString> nodeStems = stems(text);
    struct Scored {
        const HowToNode* n;
        int score;
    };
    std::vector<Scored> scored;
    for (const HowToNode& h : t.howToNodes()) {
        if (h.parentId.isEmpty()) continue; // a subtopic says more than its topic
        const HowToNode* topic = t.howToNode(h.parentId);
        int score = 0;
        for (const QString& s : stems(h.name))
            score += nodeStems.contains(s) ? 2 : 0;
        if (topic)
            for (const QString& s : stems(topic->name))
                score += nodeStems.contains(s) ? 1 : 0;
        if (score > 0) scored.push_back({&h, score});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
        return a.score != b.score ? a.score > b.score : a.n->count > b.n->count;
    });
    QStringList out;
    for (const Scored& s : scored) {
        if (out.size() >= limit) break;
        out << s.n->id;
    }
    return out;
}

void TaxonomyBrowser::showNode(const TaxonomyNode* node)
{
    const Taxonomy& t = Taxonomy::instance();
    fillChart(node);
    if (!node) {
        m_currentId.clear();
        m_detail->setHtml(tr("<h2>Fault taxonomy</h2><p>%1 labelled issues from the study by Gu "
                             "et al. (TOSEM 2023), in %2 stages and %3 symptoms. Select a node to "
                             "read what it means and what fixed it.</p>")
                              .arg(t.rowCount())
                              .arg(t.stages().size())
                              .arg(t.leaves().size()));
        return;
    }
    m_currentId = node->id;
    const NodeDescription& d = node->description;
    QString html;
    QStringList path;
    for (const TaxonomyNode* p = t.node(node->parentId); p; p = t.node(p->parentId))
        path.prepend(QStringLiteral("<a href=\"node:%1\">%2</a>").arg(esc(p->id), esc(p->name)));
    if (!path.isEmpty()) html += QStringLiteral("<p>%1</p>").arg(path.join(QStringLiteral(" › ")));
    html += QStringLiteral("<h2>%1</h2>").arg(esc(node->name));
    html += tr("<p><b>%1</b> · %2 issues (%3 of the study, %4 distributed-specific) · %5 distinct "
               "links</p>")
                .arg(kindName(node->kind))
                .arg(node->issueCount)
                .arg(shareText(node->studyShare), shareText(node->distributedShare))
                .arg(node->linkCount);
    if (!d.summary.isEmpty()) html += QStringLiteral("<p>%1</p>").arg(esc(d.summary));
    if (!d.symptoms.isEmpty()) html += tr("<h3>What you see</h3><p>%1</p>").arg(esc(d.symptoms));
    if (!d.messages.isEmpty()) {
        html += tr("<h3>Typical messages</h3>");
        for (const QString& m : d.messages)
            html += QStringLiteral("<pre style=\"white-space: pre-wrap\">%1</pre>").arg(esc(m));
    }
    if (const QStringList f = SignatureSet::builtin().messageFrameworks(node->id); !f.isEmpty())
        html +=
            tr("<p><i>Messages recognised from:</i> %1</p>").arg(esc(f.join(QLatin1String(", "))));
    if (!d.cause.isEmpty()) html += tr("<h3>Why it happens</h3><p>%1</p>").arg(esc(d.cause));
    if (!d.distinguish.isEmpty()) {
        html += tr("<h3>Telling it apart</h3><p>%1</p>").arg(esc(d.distinguish));
        QStringList see;
        for (const QString& id : d.seeAlso)
            if (const TaxonomyNode* n = t.node(id))
                see << QStringLiteral("<a href=\"node:%1\">%2</a>").arg(esc(id), esc(n->name));
        if (!see.isEmpty()) html += tr("<p>See also: %1</p>").arg(see.join(QStringLiteral(", ")));
    }
    if (!node->fixPatterns.empty()) {
        html += tr("<h3>Fix patterns</h3><table cellspacing=\"0\" cellpadding=\"3\">"
                   "<tr><th align=\"left\">Pattern</th><th align=\"right\">Issues</th>"
                   "<th align=\"right\">Share</th><th></th></tr>");
        for (const KeyCount& kc : node->fixPatterns) {
            const FixPattern* p = t.fixPattern(kc.key);
            const QString link = t.walkthrough(kc.key)
                                     ? QStringLiteral("<a href=\"walkthrough:%1\">%2</a>")
                                           .arg(esc(kc.key), tr("Walkthrough"))
                                     : QString();
            html += QStringLiteral("<tr><td>%1</td><td align=\"right\">%2</td>"
                                   "<td align=\"right\">%3</td><td>%4</td></tr>")
                        .arg(esc(p ? p->name : kc.key))
                        .arg(kc.count)
                        .arg(shareText(node->issueCount ? double(kc.count) / node->issueCount : 0))
                        .arg(link);
        }
        html += QStringLiteral("</table>");
    }
    if (!node->frameworks.empty()) {
        QStringList fw;
        for (const KeyCount& kc : node->frameworks)
            fw << QStringLiteral("%1 (%2)").arg(esc(kc.key)).arg(kc.count);
        html += tr("<h3>Frameworks</h3><p>%1</p>").arg(fw.join(QStringLiteral(", ")));
    }
    if (!node->exampleLinks.isEmpty()) {
        html += tr("<h3>Example issues</h3><ul>");
        for (const QString& link : node->exampleLinks)
            html += QStringLiteral("<li><a href=\"%1\">%1</a></li>").arg(esc(link));
        html += QStringLiteral("</ul>");
    }
    const QStringList howTo = relatedHowToIds(*node);
    if (!howTo.isEmpty()) {
        html += tr("<h3>Related how-to topics</h3><ul>");
        for (const QString& id : howTo) {
            const HowToNode* h = t.howToNode(id);
            const HowToNode* topic = t.howToNode(h->parentId);
            html += tr("<li>%1 › %2 (%3 questions)</li>")
                        .arg(esc(topic ? topic->name : QString()), esc(h->name))
                        .arg(h->count);
        }
        html += QStringLiteral("</ul>");
    }
    m_detail->setHtml(html);
    Q_EMIT nodeSelected(node->id);
}

void TaxonomyBrowser::fillChart(const TaxonomyNode* node)
{
    m_chart->removeAllSeries();
    for (QAbstractAxis* axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_barCount = 0;
    if (!node || node->fixPatterns.empty()) {
        // Never a blank pane: say what would be here.
        m_chart->setTitle(node ? tr("No fix recorded for this node")
                               : tr("Select a symptom to chart the fixes of its issues"));
        return;
    }
    const Taxonomy& t = Taxonomy::instance();
    const int n = std::min<int>(kMaxChartBars, int(node->fixPatterns.size()));
    auto* categories = new QBarCategoryAxis;
    // The names share the chart's width with the bars: each is elided to 3/8 of it, its share
    // kept whole (Qt Charts puts the plot about 40 % in and clips longer names at the chart's
    // left edge). Refilled when the chart's width changes.
    const QFontMetrics labelFont(categories->labelsFont());
    const int budget = m_chartView->width() * 3 / 8;
    QList<qreal> values;
    QStringList names, full;
    values.reserve(n);
    // Horizontal bars stack bottom-up: feed them least first so the most used sits on top.
    for (int i = n - 1; i >= 0; --i) {
        const KeyCount& kc = node->fixPatterns[size_t(i)];
        const FixPattern* p = t.fixPattern(kc.key);
        const QString share = QStringLiteral(" (%1)").arg(
            shareText(node->issueCount ? double(kc.count) / node->issueCount : 0));
        const int room =
            std::max(budget - labelFont.horizontalAdvance(share), labelFont.averageCharWidth() * 8);
        const QString name = p ? p->name : kc.key;
        names << labelFont.elidedText(name, Qt::ElideRight, room) + share;
        full << tr("%1: %2%3")
                    .arg(name, countText(kc.count, tr("%1 issue"), tr("%1 issues")), share);
        values << kc.count;
    }
    auto* set = new QBarSet(tr("Issues"));
    set->append(values);
    // The whole name of an elided label, on the bar under the mouse.
    connect(set, &QBarSet::hovered, this, [full](bool on, int index) {
        if (on)
            QToolTip::showText(QCursor::pos(), full.value(index));
        else
            QToolTip::hideText();
    });
    auto* series = new QHorizontalBarSeries;
    series->append(set);
    series->setLabelsVisible(true);
    m_chart->addSeries(series);
    categories->append(names);
    categories->setTruncateLabels(false);
    auto* counts = new QValueAxis;
    counts->setRange(0, node->fixPatterns.front().count * 1.15);
    counts->setLabelFormat(QStringLiteral("%d"));
    counts->applyNiceNumbers();
    m_chart->addAxis(categories, Qt::AlignLeft);
    m_chart->addAxis(counts, Qt::AlignBottom);
    series->attachAxis(categories);
    series->attachAxis(counts);
    m_chart->setTitle(
        int(node->fixPatterns.size()) > n
            ? tr("Top %1 of %2 fix patterns (issues)").arg(n).arg(node->fixPatterns.size())
            : tr("Fix patterns (issues)"));
    m_barCount = n;
    styleChart();
    // Give the chart room for its bars (in lines of text, so it scales with the font), up to
    // about half the page; the user can still drag the splitter.
    const int needed = fontMetrics().height() * (5 + 3 * n / 2);
    const QList<int> sizes = m_detailSplit->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (total > 0 && sizes.value(1) < std::min(needed, total * 11 / 20)) {
        const int chart = std::min(needed, total * 11 / 20);
        m_detailSplit->setSizes({total - chart, chart});
    }
}

void TaxonomyBrowser::styleChart()
{
    // Follow the widget palette, so a dark desktop gets a dark chart.
    const QPalette pal = palette();
    applyChartPalette(m_chart, m_chartView, pal);
    for (QAbstractSeries* s : m_chart->series())
        if (auto* bars = qobject_cast<QHorizontalBarSeries*>(s))
            for (QBarSet* set : bars->barSets()) {
                set->setBrush(pal.highlight());
                set->setPen(Qt::NoPen);
                set->setLabelBrush(pal.text());
            }
}

bool TaxonomyBrowser::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_chartView && event->type() == QEvent::Resize &&
        static_cast<QResizeEvent*>(event)->oldSize().width() != m_chartView->width())
        fillChart(Taxonomy::instance().node(m_currentId)); // the names' room changed
    return QWidget::eventFilter(watched, event);
}

void TaxonomyBrowser::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart();
        // Link colours are baked into the document when it is built: build it again.
        if (const TaxonomyNode* node = Taxonomy::instance().node(m_currentId)) showNode(node);
    }
    QWidget::changeEvent(event);
}

void TaxonomyBrowser::onLink(const QUrl& url)
{
    if (url.scheme() == QLatin1String("node"))
        selectNode(url.path());
    else if (url.scheme() == QLatin1String("walkthrough"))
        Q_EMIT walkthroughRequested(url.path());
    else if (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https"))
        QDesktopServices::openUrl(url);
}

QByteArray TaxonomyBrowser::saveState() const
{
    QByteArray out;
    QDataStream s(&out, QIODevice::WriteOnly);
    s << m_split->saveState() << m_detailSplit->saveState() << m_currentId;
    return out;
}

void TaxonomyBrowser::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_pendingState.isEmpty()) {
        layout()->activate(); // the splitters get their real size before the sizes are applied
        restoreState(std::exchange(m_pendingState, {}));
    }
}

void TaxonomyBrowser::restoreState(const QByteArray& state)
{
    QDataStream s(state);
    QByteArray a, b;
    QString id;
    s >> a >> b >> id;
    if (s.status() != QDataStream::Ok) return;
    if (!id.isEmpty() && id != m_currentId) selectNode(id);
    if (!isVisible()) {
        m_pendingState = state;
        return;
    }
    m_split->restoreState(a);
    m_detailSplit->restoreState(b);
}

} // namespace rankscope
