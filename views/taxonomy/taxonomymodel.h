#pragma once

#include <QAbstractItemModel>

namespace rankscope {

class Taxonomy;
struct TaxonomyNode;

// The study's taxonomy as a tree: stage > inner category > leaf symptom, with issue counts.
// Reads a Taxonomy that outlives it (Taxonomy::instance() by default).
class TaxonomyModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, IssuesColumn, ShareColumn, ColumnCount };
    enum Role {
        NodeIdRole = Qt::UserRole, // QString
        KindRole,                  // int(TaxonomyNode::Kind)
        SortRole,                  // name, or the number of the column
        SearchTextRole,            // name, id, summary and typical messages, for the filter
    };

    explicit TaxonomyModel(QObject* parent = nullptr);
    explicit TaxonomyModel(const Taxonomy& taxonomy, QObject* parent = nullptr);

    const Taxonomy& taxonomy() const { return m_taxonomy; }
    QModelIndex indexOfNode(const QString& id) const;
    const TaxonomyNode* nodeAt(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    // Node positions in taxonomy.nodes(); the internal id of an index is position + 1.
    const std::vector<qsizetype>& childrenOf(qsizetype position) const;
    void build();

    const Taxonomy& m_taxonomy;
    std::vector<qsizetype> m_roots;
    std::vector<std::vector<qsizetype>> m_children; // per node position
    std::vector<qsizetype> m_parent;                // -1 for a stage
    std::vector<int> m_row;                         // row under its parent
};

} // namespace rankscope
