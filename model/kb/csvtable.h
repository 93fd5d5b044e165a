#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <vector>

namespace rankscope {

// An RFC 4180 CSV table with a header row: quoted fields may hold commas, doubled quotes and
// line breaks; CRLF and LF line ends are both accepted. The study's sheets are read with it.
class CsvTable {
public:
    // Parses UTF-8 text. On malformed input (an unterminated quote, a quote inside an unquoted
    // field, a row whose width differs from the header) the table is invalid and error() says
    // where.
    static CsvTable parse(const QByteArray& utf8);

    bool isValid() const { return m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    const QStringList& header() const { return m_header; }
    // -1 when the header has no such column.
    int column(const QString& name) const { return static_cast<int>(m_header.indexOf(name)); }
    qsizetype rowCount() const { return static_cast<qsizetype>(m_rows.size()); }
    const QStringList& row(qsizetype i) const { return m_rows[static_cast<size_t>(i)]; }

private:
    QStringList m_header;
    std::vector<QStringList> m_rows;
    QString m_error;
};

} // namespace rankscope
