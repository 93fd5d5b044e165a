#include "views/taxonomy/taxonomymodel.h"

#include "model/kb/taxonomy.h"

#include <QHash>

namespace rankscope {

TaxonomyModel::TaxonomyModel(QObject* parent) : TaxonomyModel(Taxonomy::instance(), parent) {}

TaxonomyModel::TaxonomyModel(const Taxonomy& taxonomy, QObject* parent)
    : QAbstractItemModel(parent), m_taxonomy(taxonomy)
{
    build();
}

void TaxonomyModel::build()
{
    const auto& nodes = m_taxonomy.nodes();
    QHash<QString, qsizetype> position;
    for (qsizetype i = 0; i < qsizetype(nodes.size()); ++i)
        position.insert(nodes[size_t(i)].id, i);
    m_children.assign(nodes.size(), {});
    m_parent.assign(nodes.size(), -1);
    m_row.assign(nodes.size(), 0);
    for (qsizetype i = 0; i < qsizetype(nodes.size()); ++i) {
        const TaxonomyNode& n = nodes[size_t(i)];
        const qsizetype p = n.parentId.isEmpty() ? -1 : position.value(n.parentId, -1);
        auto& siblings = p < 0 ? m_roots : m_children[size_t(p)];
        m_parent[size_t(i)] = p;
        m_row[size_t(i)] = int(siblings.size());
        siblings.push_back(i);
    }
}

const std::vector<qsizetype>& TaxonomyModel::childrenOf(qsizetype position) const
{
    return position < 0 ? m_roots : m_children[size_t(position)];
}

const TaxonomyNode* TaxonomyModel::nodeAt(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this) return nullptr;
    return &m_taxonomy.nodes()[size_t(index.internalId() - 1)];
}

QModelIndex TaxonomyModel::indexOfNode(const QString& id) const
{
    const TaxonomyNode* node = m_taxonomy.node(id);
    if (!node) return {};
    const qsizetype position = node - m_taxonomy.nodes().data();
    return createIndex(m_row[size_t(position)], 0, quintptr(position + 1));
}

QModelIndex TaxonomyModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent)) return {};
    const qsizetype p = parent.isValid() ? qsizetype(parent.internalId() - 1) : -1;
    return createIndex(row, column, quintptr(childrenOf(p)[size_t(row)] + 1));
}

QModelIndex TaxonomyModel::parent(const QModelIndex& child) const
{
    if (!child.isValid()) return {};
    const qsizetype p = m_parent[size_t(child.internalId() - 1)];
    if (p < 0) return {};
    return createIndex(m_row[size_t(p)], 0, quintptr(p + 1));
}

int TaxonomyModel::rowCount(const QModelIndex& parent) const
{
    if (parent.column() > 0) return 0;
    const qsizetype p = parent.isValid() ? qsizetype(parent.internalId() - 1) : -1;
    return int(childrenOf(p).size());
}

int TaxonomyModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant TaxonomyModel::data(const QModelIndex& index, int role) const
{
    const TaxonomyNode* n = nodeAt(index);
    if (!n) return {};
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return n->name;
        case IssuesColumn:
            return n->issueCount;
        case ShareColumn:
            return shareText(n->studyShare);
        }
        break;
    case Qt::ToolTipRole:
        return n->description.summary.isEmpty() ? n->name : n->description.summary;
    case Qt::TextAlignmentRole:
        if (index.column() != NameColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case NodeIdRole:
        return n->id;
    case KindRole:
        return int(n->kind);
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return n->name;
        case IssuesColumn:
            return n->issueCount;
        case ShareColumn:
            return n->studyShare;
        }
        break;
    case SearchTextRole:
        return QStringList{n->name, n->id, n->description.summary, n->description.symptoms,
                           n->description.messages.join(QLatin1Char('\n'))}
            .join(QLatin1Char('\n'));
    }
    return {};
}

QVariant TaxonomyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn:
        return tr("Symptom");
    case IssuesColumn:
        return tr("Issues");
    case ShareColumn:
        return tr("Share");
    }
    return {};
}

} // namespace rankscope
