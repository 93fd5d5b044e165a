#include "model/kb/csvtable.h"

namespace rankscope {

CsvTable CsvTable::parse(const QByteArray& utf8)
{
    CsvTable table;
    const QString text = QString::fromUtf8(utf8);
    std::vector<QStringList> records;
    QStringList record;
    QString field;
    bool quoted = false;    // inside a quoted field
    bool wasQuoted = false; // the current field began with a quote
    bool fieldStarted = false;
    int line = 1;
    auto endField = [&] {
        record << field;
        field.clear();
        wasQuoted = false;
        fieldStarted = false;
    };
    auto endRecord = [&] {
        endField();
        // A blank line (one empty unquoted field) is not a record.
        if (!(record.size() == 1 && record.first().isEmpty())) records.push_back(record);
        record.clear();
    };
    const qsizetype n = text.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = text[i];
        if (quoted) {
            if (c == QLatin1Char('"')) {
                if (i + 1 < n && text[i + 1] == QLatin1Char('"')) {
                    field += c;
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                if (c == QLatin1Char('\n')) ++line;
                field += c;
            }
            continue;
        }
        if (c == QLatin1Char(',')) {
            endField();
        } else if (c == QLatin1Char('\r') && i + 1 < n && text[i + 1] == QLatin1Char('\n')) {
            continue;
        } else if (c == QLatin1Char('\n')) {
            endRecord();
            ++line;
        } else if (c == QLatin1Char('"')) {
            if (fieldStarted) {
                table.m_error = QStringLiteral("line %1: quote inside a field").arg(line);
                return table;
            }
            quoted = true;
            wasQuoted = true;
            fieldStarted = true;
        } else {
            if (wasQuoted) {
                table.m_error =
                    QStringLiteral("line %1: text after the closing quote of a field").arg(line);
                return table;
            }
            field += c;
            fieldStarted = true;
        }
    }
    if (quoted) {
        table.m_error = QStringLiteral("line %1: unterminated quoted field").arg(line);
        return table;
    }
    if (fieldStarted || !record.isEmpty()) endRecord();
    if (records.empty()) {
        table.m_error = QStringLiteral("no header row");
        return table;
    }
    table.m_header = records.front();
    for (size_t r = 1; r < records.size(); ++r) {
        if (records[r].size() != table.m_header.size()) {
            table.m_error = QStringLiteral("record %1 has %2 fields, the header has %3")
                                .arg(r + 1)
                                .arg(records[r].size())
                                .arg(table.m_header.size());
            return table;
        }
        table.m_rows.push_back(records[r]);
    }
    return table;
}

} // namespace rankscope
