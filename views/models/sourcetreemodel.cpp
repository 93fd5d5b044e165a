#include "views/models/sourcetreemodel.h"

#include "views/counttext.h"

#include <QLocale>

namespace rankscope {

SourceTreeModel::SourceTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void SourceTreeModel::setSession(SessionPtr session)
{
    beginResetModel();
    m_session = std::move(session);
    m_groups.clear();
    if (m_session) {
        const TraceFolder& folder = m_session->folder;
        for (int rank : folder.ranks())
            m_groups.append({rank, folder.sourcesOfRank(rank)});
        const QList<SourceFile> rest = folder.unattributedSources();
        if (!rest.isEmpty()) m_groups.append({std::nullopt, rest});
    }
    endResetModel();
}

QModelIndex SourceTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, kGroupId);
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex SourceTreeModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kGroupId) return {};
    return createIndex(int(child.internalId() - 1), 0, kGroupId);
}

int SourceTreeModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid()) return int(m_groups.size());
    if (parent.column() != 0 || parent.internalId() != kGroupId) return 0;
    return int(m_groups.at(parent.row()).files.size());
}

int SourceTreeModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant SourceTreeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    if (index.internalId() == kGroupId)
        return groupData(m_groups.at(index.row()), index.column(), role);
    const Group& group = m_groups.at(int(index.internalId() - 1));
    return fileData(group.files.at(index.row()), index.column(), role);
}

QVariant SourceTreeModel::groupData(const Group& group, int column, int role) const
{
    if (role == RankRole) return group.rank ? QVariant(*group.rank) : QVariant();
    if (role != Qt::DisplayRole) return {};
    if (column == NameColumn)
        return group.rank ? tr("Rank %1").arg(*group.rank) : tr("Rank unknown");
    if (column == SizeColumn) {
        qint64 bytes = 0;
        for (const SourceFile& f : group.files)
            bytes += f.sizeBytes;
        return QLocale().formattedDataSize(bytes);
    }
    if (column == StatusColumn) {
        int bad = 0, skipped = 0;
        for (const SourceFile& f : group.files) {
            bad += f.status == SourceStatus::Truncated || f.status == SourceStatus::Error;
            skipped += f.status == SourceStatus::Skipped;
        }
        QStringList parts;
        if (bad) parts << countText(bad, tr("%1 problem"), tr("%1 problems"));
        if (skipped) parts << tr("%1 skipped").arg(skipped);
        return parts.isEmpty() ? QVariant() : QVariant(parts.join(QStringLiteral(", ")));
    }
    return {};
}

QVariant SourceTreeModel::fileData(const SourceFile& file, int column, int role) const
{
    switch (role) {
    case RankRole:
        return file.rank ? QVariant(*file.rank) : QVariant();
    case AbsolutePathRole:
        return file.absolutePath;
    case Qt::ForegroundRole: // not read: greyed, its tooltip says what it is
        return file.status == SourceStatus::Skipped ? QVariant(kSkippedColor) : QVariant();
    case Qt::ToolTipRole: {
        QString tip = file.message.isEmpty() ? file.relativePath
                                             : file.relativePath + QLatin1Char('\n') + file.message;
        if (file.limit != LoadLimit::None)
            tip +=
                QLatin1Char('\n') + tr("Stopped by the load limit of %1: raise it in File > "
                                       "Load Limits… (rankscope analyze %2) and reload.")
                                        .arg(loadLimitName(file.limit), loadLimitFlag(file.limit));
        return tip;
    }
    case Qt::DisplayRole:
        switch (column) {
        case NameColumn:
            return file.relativePath;
        case KindColumn:
            return sourceKindName(file.kind);
        case SizeColumn:
            return QLocale().formattedDataSize(file.sizeBytes);
        case StatusColumn:
            return file.limit == LoadLimit::None
                       ? sourceStatusName(file.status)
                       : tr("%1: limit of %2")
                             .arg(sourceStatusName(file.status), loadLimitName(file.limit));
        default:
            return {};
        }
    default:
        return {};
    }
}

QVariant SourceTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn:
        return tr("File");
    case KindColumn:
        return tr("Kind");
    case SizeColumn:
        return tr("Size");
    case StatusColumn:
        return tr("Status");
    default:
        return {};
    }
}

} // namespace rankscope
