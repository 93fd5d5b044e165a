#pragma once

#include "model/tracesession.h"

#include <QAbstractItemModel>
#include <QColor>

namespace rankscope {

// The files of a trace folder as a two-level tree: one group per rank (and one for the files
// whose rank could not be told), the files below. Columns: name, kind, size, status. A skipped
// file (SourceStatus::Skipped) is greyed and not counted among its group's problems.
class SourceTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, SizeColumn, StatusColumn, ColumnCount };
    enum Role { RankRole = Qt::UserRole, AbsolutePathRole };
    // The text colour of a skipped file's row (a file of no format RankScope reads).
    static inline const QColor kSkippedColor{Qt::gray};

    explicit SourceTreeModel(QObject* parent = nullptr);

    void setSession(SessionPtr session);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Group {
        std::optional<int> rank;
        QList<SourceFile> files;
    };
    // internalId: 0 for a group row, group index + 1 for a file row.
    static constexpr quintptr kGroupId = 0;

    QVariant groupData(const Group& group, int column, int role) const;
    QVariant fileData(const SourceFile& file, int column, int role) const;

    SessionPtr m_session;
    QList<Group> m_groups;
};

} // namespace rankscope
