#include "model/kb/neighbourmodel.h"

#include <algorithm>
#include <cmath>

namespace rankscope {

QString neighbourListText(double share, const QList<NeighbourReport>& neighbours, int shown)
{
    QStringList items;
    for (const NeighbourReport& n :
         neighbours.first(std::min<qsizetype>(shown, neighbours.size()))) {
        QString name = n.link;
        const QStringList parts = n.link.split(QLatin1Char('/'));
        if (parts.size() == 7 && parts[2] == QLatin1String("github.com"))
            name = QStringLiteral("%1/%2#%3").arg(parts[3], parts[4], parts[6]);
        items.append(QStringLiteral("%1 (%2)").arg(name).arg(n.similarity, 0, 'f', 2));
    }
    if (neighbours.size() > shown)
        items.append(QStringLiteral("%1 more").arg(neighbours.size() - shown));
    return QStringLiteral("%1 of the vote: %2")
        .arg(share, 0, 'f', 2)
        .arg(items.join(QLatin1String(", ")));
}

bool NeighbourModel::fromTsv(QByteArrayView tsv, NeighbourModel* out, QString* error)
{
    NeighbourModel model;
    QList<QStringList> tokensOf;
    qsizetype lineNumber = 0;
    for (qsizetype start = 0; start < tsv.size();) {
        qsizetype end = tsv.indexOf('\n', start);
        if (end < 0) end = tsv.size();
        const QByteArrayView line = tsv.sliced(start, end - start).trimmed();
        start = end + 1;
        ++lineNumber;
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> fields = line.toByteArray().split('\t');
        QStringList leaves, tokens;
        if (fields.size() == 3) {
            leaves = QString::fromUtf8(fields[0]).split(QLatin1Char('|'), Qt::SkipEmptyParts);
            // Sorted and distinct once: the postings and the norm below read them in this order,
            // not a hash's (seeded per process), so every run gives the same last digit.
            tokens = QString::fromUtf8(fields[2]).split(QLatin1Char(' '), Qt::SkipEmptyParts);
            tokens.sort();
            tokens.removeDuplicates();
        }
        if (leaves.isEmpty() || tokens.isEmpty()) {
            *error = QStringLiteral("neighbours: line %1 is not \"leaves<TAB>link<TAB>tokens\"")
                         .arg(lineNumber);
            return false;
        }
        model.m_reports.append({QString::fromUtf8(fields[1]), leaves, 0.0});
        tokensOf.append(tokens);
        for (const QString& leaf : leaves)
            model.m_leafPrior[leaf] += 1.0 / double(leaves.size());
    }
    const int reports = int(model.m_reports.size());
    for (double& share : model.m_leafPrior)
        share /= double(reports);
    for (int r = 0; r < reports; ++r)
        for (const QString& token : std::as_const(tokensOf[r]))
            model.m_postings[token].append(r);
    for (auto it = model.m_postings.cbegin(); it != model.m_postings.cend(); ++it)
        model.m_idf.insert(it.key(), std::log(double(reports) / double(it.value().size())));
    for (int r = 0; r < reports; ++r) {
        double sum = 0.0;
        for (const QString& token : std::as_const(tokensOf[r])) {
            const double idf = model.m_idf.value(token);
            sum += idf * idf;
        }
        model.m_reports[r].norm = std::sqrt(sum);
    }
    *out = std::move(model);
    return true;
}

QList<NeighbourReport> NeighbourModel::nearest(const QStringList& tokens, int count,
                                               qsizetype* known) const
{
    QList<double> dot(m_reports.size(), 0.0);
    double queryNorm = 0.0;
    if (known) *known = 0;
    for (const QString& token : tokens) {
        const auto postings = m_postings.constFind(token);
        if (postings == m_postings.cend()) continue;
        if (known) ++*known;
        const double idf = m_idf.value(token);
        queryNorm += idf * idf;
        for (int r : *postings)
            dot[r] += idf * idf;
    }
    QList<NeighbourReport> out;
    if (queryNorm <= 0.0 || count <= 0) return out;
    queryNorm = std::sqrt(queryNorm);
    QList<std::pair<double, int>> alike;
    for (int r = 0; r < int(m_reports.size()); ++r)
        if (dot[r] > 0.0 && m_reports[r].norm > 0.0)
            alike.append({dot[r] / (queryNorm * m_reports[r].norm), r});
    const auto before = [this](const std::pair<double, int>& a, const std::pair<double, int>& b) {
        if (a.first != b.first) return a.first > b.first;
        return m_reports[a.second].link < m_reports[b.second].link;
    };
    const qsizetype keep = std::min<qsizetype>(count, alike.size());
    std::partial_sort(alike.begin(), alike.begin() + keep, alike.end(), before);
    for (qsizetype i = 0; i < keep; ++i) {
        const Report& r = m_reports[alike[i].second];
        out.append({r.link, r.leaves, alike[i].first});
    }
    return out;
}

QMap<QString, double> NeighbourModel::leafShares(const QList<NeighbourReport>& nearest,
                                                 double priorPower) const
{
    QMap<QString, double> votes;
    for (const NeighbourReport& n : nearest)
        for (const QString& leaf : n.leaves)
            votes[leaf] += n.similarity * n.similarity / double(n.leaves.size());
    double total = 0.0;
    for (auto it = votes.begin(); it != votes.end(); ++it) {
        // A leaf of under 0.1 % of the reports is not raised as if it were rarer still.
        if (priorPower > 0.0)
            it.value() /= std::pow(std::max(m_leafPrior.value(it.key()), 1e-3), priorPower);
        total += it.value();
    }
    if (total <= 0.0) return {};
    for (double& v : votes)
        v /= total;
    return votes;
}

} // namespace rankscope
