#include "views/issues/classificationmodel.h"

#include "model/kb/taxonomy.h"
#include "views/issues/issuetablemodel.h"

namespace rankscope {

namespace {

// A candidate's child row that sums up one part of its logit: name, figure, what made it.
QVariant summaryRow(int column, int role, const QString& name, double figure, const QString& text,
                    const QString& toolTip)
{
    if (role == Qt::ToolTipRole) return toolTip;
    if (role != Qt::DisplayRole) return {};
    switch (column) {
    case ClassificationModel::SymptomColumn:
        return name;
    case ClassificationModel::ScoreColumn:
        return QString::number(figure, 'f', 2);
    case ClassificationModel::EvidenceColumn:
        return text;
    }
    return {};
}

} // namespace

ClassificationModel::ClassificationModel(QObject* parent) : QAbstractItemModel(parent) {}

void ClassificationModel::setCandidates(const QList<Candidate>& candidates)
{
    beginResetModel();
    m_candidates = candidates;
    endResetModel();
}

QModelIndex ClassificationModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent)) return {};
    return createIndex(row, column, parent.isValid() ? quintptr(parent.row() + 1) : quintptr(0));
}

QModelIndex ClassificationModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == 0) return {};
    return createIndex(int(child.internalId() - 1), 0, quintptr(0));
}

int ClassificationModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid()) return int(m_candidates.size());
    if (parent.internalId() != 0 || parent.column() != 0) return 0;
    const Candidate& c = m_candidates[parent.row()];
    return int(c.evidence.size()) + (c.terms.isEmpty() ? 0 : 1) + (c.neighbours.isEmpty() ? 0 : 1);
}

int ClassificationModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant ClassificationModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const bool isEvidence = index.internalId() != 0;
    const Candidate& c = m_candidates[isEvidence ? int(index.internalId() - 1) : index.row()];
    if (role == SymptomIdRole) return c.symptom;
    if (role == ScoreRole) return c.probability;
    // After a candidate's evidence lines: the row of the words its term model weighed, then
    // the row of the nearest labelled reports that gave it its leaf.
    const bool isTerms = isEvidence && !c.terms.isEmpty() && index.row() == c.evidence.size();
    if (isTerms)
        return summaryRow(index.column(), role, tr("terms"), c.termScore, termListText(c.terms),
                          tr("words of the report the learned term model weighs for this "
                             "symptom (+) or against it (-)"));
    if (isEvidence && index.row() >= c.evidence.size())
        return summaryRow(index.column(), role, tr("similar reports"), c.neighbourShare,
                          neighbourListText(c.neighbourShare, c.neighbours),
                          tr("labelled reports whose words are most like this report's and "
                             "that were labelled with this symptom (similarity 0-1); their "
                             "share of the vote"));
    if (isEvidence) {
        const CandidateEvidence& e = c.evidence[index.row()];
        if (role == Qt::DisplayRole) {
            switch (index.column()) {
            case SymptomColumn:
                return tr("line %1 · %2").arg(e.line).arg(e.signature);
            case ScoreColumn:
                return QString::number(e.weight, 'f', 2);
            case EvidenceColumn:
                return e.text.trimmed();
            }
        }
        if (role == Qt::ToolTipRole)
            return tr("%1 (%2)").arg(
                e.signature, e.role == SignatureRole::Root ? tr("root signature") : tr("cascade"));
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case SymptomColumn:
            return IssueTableModel::leafLabel(c.symptom);
        case ScoreColumn:
            return probabilityText(c.probability);
        case EvidenceColumn:
            if (!c.evidence.isEmpty()) return c.evidence.first().text.trimmed();
            if (!c.terms.isEmpty()) return tr("terms %1").arg(termListText(c.terms));
            if (!c.neighbours.isEmpty())
                return tr("similar reports %1")
                    .arg(neighbourListText(c.neighbourShare, c.neighbours));
            return tr("no matching line: study base rate %1").arg(shareText(c.baseRate));
        }
    }
    if (role == Qt::ToolTipRole)
        return tr("%1\nevidence %2, base rate %3, context hint %4, term score %5, similar reports' "
                  "vote %6")
            .arg(c.symptom, QString::number(c.score, 'f', 2), shareText(c.baseRate),
                 QString::number(c.stageHint, 'f', 2), QString::number(c.termScore, 'f', 2),
                 QString::number(c.neighbourShare, 'f', 2));
    return {};
}

QVariant ClassificationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case SymptomColumn:
        return tr("Symptom");
    case ScoreColumn:
        return tr("Probability");
    case EvidenceColumn:
        return tr("Evidence");
    }
    return {};
}

} // namespace rankscope
