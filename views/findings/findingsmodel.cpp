#include "views/findings/findingsmodel.h"

#include "model/analysisreport.h"
#include "model/kb/taxonomy.h"
#include "views/timeline/timelineview.h"

#include <QColor>
#include <QStringList>
#include <algorithm>
#include <numeric>

namespace rankscope {

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void FindingsModel::setSession(SessionPtr session)
{
    beginResetModel();
    m_session = std::move(session);
    m_rows.clear();
    if (m_session) {
        const auto& findings = m_session->analysis.findings;
        m_rows.resize(findings.size());
        std::iota(m_rows.begin(), m_rows.end(), 0);
        std::stable_sort(m_rows.begin(), m_rows.end(), [&findings](int a, int b) {
            return findings[std::size_t(a)].severity < findings[std::size_t(b)].severity;
        });
    }
    endResetModel();
}

const Finding* FindingsModel::finding(int row) const
{
    if (!m_session || row < 0 || row >= int(m_rows.size())) return nullptr;
    return &m_session->analysis.findings[std::size_t(m_rows[std::size_t(row)])];
}

int FindingsModel::rowOfFinding(const QString& id) const
{
    for (int row = 0; row < int(m_rows.size()); ++row)
        if (QString::fromStdString(finding(row)->id) == id) return row;
    return -1;
}

QString FindingsModel::ranksText(const std::vector<int>& ranks)
{
    if (ranks.empty()) return {};
    QStringList parts;
    for (int r : ranks)
        parts << QString::number(r);
    return (ranks.size() == 1 ? tr("rank %1") : tr("ranks %1"))
        .arg(parts.join(QStringLiteral(", ")));
}

QString FindingsModel::symptomName(const std::string& id)
{
    const QString qid = QString::fromStdString(id);
    if (const TaxonomyNode* node = Taxonomy::instance().node(qid)) return node->name;
    return qid;
}

QString FindingsModel::findingSymptom(const Finding& f)
{
    return f.symptom.empty() ? AnalysisReport::symptomText(f) : symptomName(f.symptom);
}

QColor FindingsModel::severityColor(Severity severity)
{
    switch (severity) {
    case Severity::Error:
        return QColor(0xd3, 0x2f, 0x2f);
    case Severity::Warning:
        return QColor(0xf5, 0xa6, 0x23);
    case Severity::Info:
        return QColor(0x1e, 0x88, 0xe5);
    }
    return {};
}

QList<TimelineMarker> FindingsModel::timelineMarkers(const AnalysisResult& analysis)
{
    QList<TimelineMarker> markers;
    for (const Finding& f : analysis.findings) {
        if (f.startNs < 0 || f.endNs < f.startNs) continue;
        TimelineMarker m;
        m.startNs = f.startNs;
        m.endNs = f.endNs;
        m.ranks = QList<int>(f.ranks.begin(), f.ranks.end());
        m.color = severityColor(f.severity);
        m.label = QStringLiteral("%1 %2").arg(QString::fromStdString(f.id),
                                              QString::fromStdString(findingKindName(f.kind)));
        m.id = QString::fromStdString(f.id);
        markers.append(m);
    }
    return markers;
}

QHash<int, qint64> FindingsModel::timelineOffsets(const ClockAlignment& clock)
{
    QHash<int, qint64> offsets;
    for (const auto& [rank, offset] : clock.offsetNs)
        if (offset) offsets.insert(rank, -*offset);
    return offsets;
}

int FindingsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Finding* f = finding(index.row());
    if (!f) return {};
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn:
            return QString::fromStdString(severityName(f->severity));
        case KindColumn:
            return QString::fromStdString(findingKindName(f->kind));
        case RanksColumn:
            return ranksText(f->ranks);
        case SymptomColumn:
            return findingSymptom(*f);
        case SummaryColumn:
            return QString::fromStdString(f->summary);
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == SymptomColumn) return QString::fromStdString(f->symptom);
        return QString::fromStdString(f->summary);
    case Qt::DecorationRole:
        if (index.column() != SeverityColumn) return {};
        return severityColor(f->severity);
    case SeverityRole:
        return QString::fromStdString(severityName(f->severity));
    case FindingIdRole:
        return QString::fromStdString(f->id);
    default:
        return {};
    }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case KindColumn:
        return tr("Kind");
    case RanksColumn:
        return tr("Ranks");
    case SymptomColumn:
        return tr("Symptom");
    case SummaryColumn:
        return tr("Summary");
    default:
        return {};
    }
}

} // namespace rankscope
