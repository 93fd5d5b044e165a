#include "views/issues/issuetablemodel.h"

#include "model/kb/taxonomy.h"

#include <QFileInfo>
#include <QHash>
#include <QUrl>
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace rankscope {

namespace {

QString plainSnippet(QString s)
{
    s.remove(IssueCorpus::kSnippetOpen);
    s.remove(IssueCorpus::kSnippetClose);
    return s;
}

} // namespace

IssueTableModel::IssueTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void IssueTableModel::setCorpus(const IssueCorpus* corpus)
{
    m_corpus = corpus;
    refresh();
}

void IssueTableModel::setFilter(const IssueFilter& filter)
{
    m_filter = filter;
    readMatches();
}

void IssueTableModel::refresh()
{
    for (QHash<qint64, int>& r : m_ranks)
        r.clear();
    readMatches();
}

void IssueTableModel::readMatches()
{
    m_changing = true;
    beginResetModel();
    m_rows.clear();
    m_anyWord = false;
    m_ids = m_corpus && m_corpus->isOpen() ? m_corpus->matchingIds(m_filter, &m_anyWord)
                                           : QList<qint64>{};
    sortIds();
    endResetModel();
    m_changing = false;
    Q_EMIT matchCountChanged(matchCount());
}

qint64 IssueTableModel::idAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].id : 0;
}

const IssueRecord* IssueTableModel::recordAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[row] : nullptr;
}

int IssueTableModel::rowOfId(qint64 id)
{
    const qsizetype at = m_ids.indexOf(id);
    if (at < 0) return -1;
    while (m_rows.size() <= at && canFetchMore({}))
        fetchMore({});
    return int(at);
}

int IssueTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int IssueTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

bool IssueTableModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && m_rows.size() < m_ids.size();
}

void IssueTableModel::fetchMore(const QModelIndex& parent)
{
    if (m_changing || !canFetchMore(parent)) return;
    const QList<qint64> next = m_ids.mid(m_rows.size(), kBatchRows);
    QList<IssueRecord> rows = m_corpus->records(next, m_filter.text);
    if (rows.size() != next.size()) {
        // The corpus changed under the ids (another connection deleted some): read them again.
        refresh();
        return;
    }
    m_changing = true;
    beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + rows.size() - 1));
    m_rows << rows;
    endInsertRows();
    m_changing = false;
}

void IssueTableModel::sort(int column, Qt::SortOrder order)
{
    if (column >= ColumnCount) return;
    m_sortColumn = std::max(column, -1);
    m_sortOrder = order;
    readMatches();
}

void IssueTableModel::sortIds()
{
    if (m_ids.size() < 2) return;
    // Relevance is the order matchingIds() returns while searching.
    if (m_sortColumn == MatchColumn) {
        if (m_sortOrder == Qt::DescendingOrder) std::reverse(m_ids.begin(), m_ids.end());
        return;
    }
    const bool searching = !m_filter.text.trimmed().isEmpty();
    if (m_sortColumn < 0 && searching) return;
    const auto stableSortBy = [&](int column, bool descending) {
        const QHash<qint64, int>& rank = ranks(column);
        std::stable_sort(m_ids.begin(), m_ids.end(), [&](qint64 a, qint64 b) {
            return descending ? rank.value(a) > rank.value(b) : rank.value(a) < rank.value(b);
        });
    };
    // Without a search, matchingIds() returns the study's CSV order: its links sorted as text
    // (#1009 before #101), the how-to questions after all faults. The default order, and the
    // order of ties, is by issue instead; while searching, ties keep the best match first.
    if (!searching) stableSortBy(IssueColumn, false);
    if (m_sortColumn >= 0) stableSortBy(m_sortColumn, m_sortOrder == Qt::DescendingOrder);
}

const QHash<qint64, int>& IssueTableModel::ranks(int column)
{
    QHash<qint64, int>& rank = m_ranks[std::size_t(column)];
    // An id without a rank was added by another connection since the ranks were taken.
    const bool complete =
        std::all_of(m_ids.cbegin(), m_ids.cend(), [&](qint64 id) { return rank.contains(id); });
    if (complete) return rank;
    rank.clear();
    const QList<IssueRecord> all = m_corpus->records(m_corpus->matchingIds({}));
    std::vector<QString> keys;
    keys.reserve(std::size_t(all.size()));
    for (const IssueRecord& r : all)
        keys.push_back(text(r, column));
    std::vector<qsizetype> order(keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](qsizetype a, qsizetype b) {
        return naturalCompare(keys[std::size_t(a)], keys[std::size_t(b)]) < 0;
    });
    int place = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const QString& key = keys[std::size_t(order[i])];
        if (i > 0 && naturalCompare(keys[std::size_t(order[i - 1])], key) != 0) ++place;
        rank.insert(all[order[i]].id, place);
    }
    return rank;
}

int IssueTableModel::naturalCompare(QStringView a, QStringView b)
{
    const auto isDigit = [](QChar c) { return c >= QLatin1Char('0') && c <= QLatin1Char('9'); };
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool digits = isDigit(a[i]);
        if (digits != isDigit(b[j])) break; // a number against a word: plain text order decides
        qsizetype ie = i, je = j;
        while (ie < a.size() && isDigit(a[ie]) == digits)
            ++ie;
        while (je < b.size() && isDigit(b[je]) == digits)
            ++je;
        QStringView x = a.sliced(i, ie - i), y = b.sliced(j, je - j);
        if (digits) {
            while (x.size() > 1 && x.front() == QLatin1Char('0'))
                x = x.sliced(1);
            while (y.size() > 1 && y.front() == QLatin1Char('0'))
                y = y.sliced(1);
            if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
            if (const int c = x.compare(y)) return c < 0 ? -1 : 1;
        } else if (const int c = x.compare(y, Qt::CaseInsensitive)) {
            return c < 0 ? -1 : 1;
        }
        i = ie;
        j = je;
    }
    const int c = a.sliced(i).compare(b.sliced(j), Qt::CaseInsensitive);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

QString IssueTableModel::leafLabel(const QString& leafId)
{
    static const QHash<QString, int> nameUses = [] {
        QHash<QString, int> uses;
        const Taxonomy& t = Taxonomy::instance();
        for (const QString& leaf : t.leaves())
            ++uses[t.node(leaf)->name];
        return uses;
    }();
    const TaxonomyNode* node = Taxonomy::instance().node(leafId);
    if (!node) return leafId;
    if (nameUses.value(node->name) < 2) return node->name;
    return QStringLiteral("%1 (%2)").arg(node->name,
                                         stageLabel(leafId.section(QLatin1Char('/'), 0, 0)));
}

QString IssueTableModel::stageLabel(const QString& stageId)
{
    if (stageId == IssueCorpus::kHowToStage) return tr("how-to question");
    const TaxonomyNode* node = Taxonomy::instance().node(stageId);
    return node ? node->name : stageId;
}

QString IssueTableModel::fixPatternLabel(const QString& patternId)
{
    const FixPattern* p = Taxonomy::instance().fixPattern(patternId);
    return p ? p->name : patternId;
}

QString IssueTableModel::snippetHtml(const QString& snippet)
{
    QString html = snippet.toHtmlEscaped();
    html.replace(IssueCorpus::kSnippetOpen, QLatin1String("<b>"));
    html.replace(IssueCorpus::kSnippetClose, QLatin1String("</b>"));
    return html;
}

QString IssueTableModel::text(const IssueRecord& r, int column) const
{
    const auto mapped = [](const QStringList& ids, QString (*label)(const QString&)) {
        QStringList out;
        for (const QString& id : ids) {
            const QString l = label(id);
            if (!out.contains(l)) out << l;
        }
        return out.join(QLatin1String("; "));
    };
    switch (column) {
    case IssueColumn:
        return r.title.isEmpty() ? IssueCorpus::shortReference(r.link) : r.title;
    case FrameworkColumn:
        return r.frameworks.join(QLatin1String(", "));
    case SourceColumn:
        return r.source;
    case StageColumn: {
        if (r.origin == QLatin1String("howto")) return stageLabel(IssueCorpus::kHowToStage);
        QStringList stages;
        for (const QString& s : r.symptoms)
            stages << s.section(QLatin1Char('/'), 0, 0);
        stages.removeDuplicates();
        return mapped(stages, &IssueTableModel::stageLabel);
    }
    case LeafColumn:
        return mapped(r.symptoms, &IssueTableModel::leafLabel);
    case FixPatternColumn:
        return mapped(r.fixPatterns, &IssueTableModel::fixPatternLabel);
    case DistributedColumn:
        return !r.distributedSpecific ? QString() : *r.distributedSpecific ? tr("yes") : tr("no");
    case MatchColumn:
        return plainSnippet(r.snippet);
    }
    return {};
}

QVariant IssueTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const IssueRecord& r = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        return text(r, index.column());
    case Qt::ToolTipRole:
        if (index.column() == IssueColumn) return r.link;
        if (index.column() == LeafColumn && r.origin == QLatin1String("import"))
            return tr("Ranked by the symptom classifier (not a study label)");
        return text(r, index.column());
    case IdRole:
        return r.id;
    case LinkRole:
        return r.link;
    case SnippetHtmlRole:
        return snippetHtml(r.snippet);
    default:
        return {};
    }
}

QVariant IssueTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case IssueColumn:
        return tr("Issue");
    case FrameworkColumn:
        return tr("Framework");
    case SourceColumn:
        return tr("Source");
    case StageColumn:
        return tr("Stage");
    case LeafColumn:
        return tr("Leaf symptom");
    case FixPatternColumn:
        return tr("Fix pattern");
    case DistributedColumn:
        return tr("Distributed");
    case MatchColumn:
        return tr("Match");
    }
    return {};
}

} // namespace rankscope
