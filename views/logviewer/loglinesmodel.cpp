#include "views/logviewer/loglinesmodel.h"

#include <QApplication>
#include <QFont>
#include <QFontDatabase>
#include <QPalette>
#include <algorithm>

namespace rankscope {

LogLinesModel::LogLinesModel(QObject* parent) : QAbstractListModel(parent) {}

void LogLinesModel::setLog(const RankLog* log, QSet<int> citedLineNumbers)
{
    beginResetModel();
    m_log = log;
    m_cited = std::move(citedLineNumbers);
    m_numberWidth = 1;
    m_widestRow = -1;
    if (m_log && m_log->lineCount() > 0) {
        m_numberWidth = int(QString::number(m_log->lineNumber(m_log->lineCount() - 1)).size());
        qsizetype widest = -1;
        for (int i = 0, n = std::min(m_log->lineCount(), kWidestRowScanLines); i < n; ++i)
            if (const qsizetype bytes = m_log->lineBytes(i).size(); bytes > widest) {
                widest = bytes;
                m_widestRow = i;
            }
    }
    endResetModel();
}

void LogLinesModel::setCited(QSet<int> citedLineNumbers)
{
    m_cited = std::move(citedLineNumbers);
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0), index(rowCount() - 1), {Qt::BackgroundRole, CitedRole});
}

int LogLinesModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_log ? 0 : m_log->lineCount();
}

QColor LogLinesModel::citedBackground(const QPalette& palette)
{
    // A tint of the selection colour over the base, under the palette's own text colour: a
    // cited line stays apart from the selected one (full Highlight) and readable in light and
    // dark palettes alike.
    const QColor h = palette.color(QPalette::Highlight), b = palette.color(QPalette::Base);
    constexpr double kTint = 0.35;
    return QColor::fromRgbF(float(b.redF() + (h.redF() - b.redF()) * kTint),
                            float(b.greenF() + (h.greenF() - b.greenF()) * kTint),
                            float(b.blueF() + (h.blueF() - b.blueF()) * kTint));
}

QVariant LogLinesModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int number = m_log->lineNumber(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return QStringLiteral("%1  %2")
            .arg(number, m_numberWidth)
            .arg(m_log->lineText(index.row()));
    case Qt::ToolTipRole:
        return m_log->lineText(index.row());
    case Qt::ForegroundRole:
    case Qt::FontRole: {
        // A coloured log (rich, loguru, colorlog): the line in the colour of most of its text.
        const std::vector<LogColourSpan> spans = m_log->lineColours(index.row());
        const auto widest = std::max_element(
            spans.begin(), spans.end(), [](const LogColourSpan& a, const LogColourSpan& b) {
                return (a.rgb ? a.length : 0) < (b.rgb ? b.length : 0);
            });
        if (widest == spans.end() || !widest->rgb) return {};
        if (role == Qt::ForegroundRole) return QColor(QRgb(widest->rgb & 0xffffff));
        if (!widest->bold) return {};
        QFont bold = QFontDatabase::systemFont(QFontDatabase::FixedFont); // as the view's
        bold.setBold(true);
        return bold;
    }
    case Qt::BackgroundRole:
        if (m_cited.contains(number)) return citedBackground(QApplication::palette());
        return {};
    case LineNumberRole:
        return number;
    case CitedRole:
        return m_cited.contains(number);
    default:
        return {};
    }
}

} // namespace rankscope
