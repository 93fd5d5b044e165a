#include "views/logviewer/loglinesmodel.h"

#include <QApplication>
#include <QPalette>

namespace rankscope {

LogLinesModel::LogLinesModel(QObject* parent) : QAbstractListModel(parent) {}

void LogLinesModel::setLog(const RankLog* log, QSet<int> citedLineNumbers)
{
    beginResetModel();
    m_log = log;
    m_cited = std::move(citedLineNumbers);
    m_numberWidth = 1;
    if (m_log && m_log->lineCount() > 0)
        m_numberWidth = int(QString::number(m_log->lineNumber(m_log->lineCount() - 1)).size());
    endResetModel();
}

int LogLinesModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_log ? 0 : m_log->lineCount();
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
    case Qt::BackgroundRole:
        if (m_cited.contains(number)) return QApplication::palette().brush(QPalette::Highlight);
        return {};
    case Qt::ForegroundRole:
        if (m_cited.contains(number))
            return QApplication::palette().brush(QPalette::HighlightedText);
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
