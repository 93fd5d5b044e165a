#include "model/report/markdownhtml.h"

#include <QRegularExpression>
#include <QStringList>

namespace rankscope {

namespace {

// Cells of "| a | b \| c |": split on unescaped pipes.
QStringList tableCells(const QString& line)
{
    QString body = line.trimmed();
    if (body.startsWith(QLatin1Char('|'))) body.remove(0, 1);
    if (body.endsWith(QLatin1Char('|')) && !body.endsWith(QLatin1String("\\|"))) body.chop(1);
    QStringList cells;
    QString cell;
    for (qsizetype i = 0; i < body.size(); ++i) {
        if (body[i] == QLatin1Char('\\') && i + 1 < body.size() &&
            body[i + 1] == QLatin1Char('|')) {
            cell += QLatin1String("\\|");
            ++i;
        } else if (body[i] == QLatin1Char('|')) {
            cells << cell.trimmed();
            cell.clear();
        } else {
            cell += body[i];
        }
    }
    cells << cell.trimmed();
    return cells;
}

bool isTableSeparator(const QString& line)
{
    const QString t = line.trimmed();
    if (!t.contains(QLatin1String("---"))) return false;
    for (const QChar c : t)
        if (c != QLatin1Char('|') && c != QLatin1Char('-') && c != QLatin1Char(':') &&
            c != QLatin1Char(' '))
            return false;
    return true;
}

} // namespace

QString MarkdownHtml::inlineHtml(const QString& text)
{
    QString out;
    for (qsizetype i = 0; i < text.size();) {
        const QChar c = text[i];
        if (c == QLatin1Char('\\') && i + 1 < text.size() &&
            QStringLiteral("\\`*_{}[]()#+-.!|<>~").contains(text[i + 1])) {
            out += QString(text[i + 1]).toHtmlEscaped();
            i += 2;
        } else if (c == QLatin1Char('`')) {
            const qsizetype end = text.indexOf(QLatin1Char('`'), i + 1);
            if (end < 0) {
                out += QStringLiteral("`");
                ++i;
                continue;
            }
            QString code = text.mid(i + 1, end - i - 1);
            code.replace(QLatin1String("\\|"), QLatin1String("|"));
            out += QStringLiteral("<code>%1</code>").arg(code.toHtmlEscaped());
            i = end + 1;
        } else if (c == QLatin1Char('*') && text.mid(i, 2) == QLatin1String("**")) {
            const qsizetype end = text.indexOf(QLatin1String("**"), i + 2);
            if (end < 0) {
                out += QStringLiteral("**");
                i += 2;
                continue;
            }
            out +=
                QStringLiteral("<strong>%1</strong>").arg(inlineHtml(text.mid(i + 2, end - i - 2)));
            i = end + 2;
        } else if (c == QLatin1Char('!') && text.mid(i, 2) == QLatin1String("![")) {
            const qsizetype close = text.indexOf(QLatin1String("]("), i + 2);
            const qsizetype end = close < 0 ? -1 : text.indexOf(QLatin1Char(')'), close + 2);
            if (end < 0) {
                out += QStringLiteral("!");
                ++i;
                continue;
            }
            out += QStringLiteral("<img alt=\"%1\" src=\"%2\">")
                       .arg(text.mid(i + 2, close - i - 2).toHtmlEscaped(),
                            text.mid(close + 2, end - close - 2).toHtmlEscaped());
            i = end + 1;
        } else {
            out += QString(c).toHtmlEscaped();
            ++i;
        }
    }
    return out;
}

QString MarkdownHtml::render(const QString& markdown)
{
    const QStringList lines = markdown.split(QLatin1Char('\n'));
    QString out;
    QStringList paragraph;
    const auto endParagraph = [&] {
        if (!paragraph.isEmpty())
            out += QStringLiteral("<p>%1</p>\n").arg(inlineHtml(paragraph.join(QLatin1Char(' '))));
        paragraph.clear();
    };
    static const QRegularExpression heading(QStringLiteral("^(#{1,6})\\s+(.*)$"));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString& line = lines[i];
        if (line.trimmed().isEmpty()) {
            endParagraph();
            continue;
        }
        if (line.startsWith(QLatin1String("```"))) {
            endParagraph();
            QStringList code;
            for (++i; i < lines.size() && !lines[i].startsWith(QLatin1String("```")); ++i)
                code << lines[i];
            out +=
                QStringLiteral("<pre>%1</pre>\n").arg(code.join(QLatin1Char('\n')).toHtmlEscaped());
            continue;
        }
        if (const auto m = heading.match(line); m.hasMatch()) {
            endParagraph();
            const int level = int(m.captured(1).size());
            out += QStringLiteral("<h%1>%2</h%1>\n").arg(level).arg(inlineHtml(m.captured(2)));
            continue;
        }
        if (line.startsWith(QLatin1String("- "))) {
            endParagraph();
            out += QStringLiteral("<ul>\n");
            for (; i < lines.size() && lines[i].startsWith(QLatin1String("- ")); ++i)
                out += QStringLiteral("<li>%1</li>\n").arg(inlineHtml(lines[i].mid(2)));
            --i;
            out += QStringLiteral("</ul>\n");
            continue;
        }
        if (line.trimmed().startsWith(QLatin1Char('|')) && i + 1 < lines.size() &&
            isTableSeparator(lines[i + 1])) {
            endParagraph();
            out += QStringLiteral("<table>\n<thead><tr>");
            for (const QString& cell : tableCells(line))
                out += QStringLiteral("<th>%1</th>").arg(inlineHtml(cell));
            out += QStringLiteral("</tr></thead>\n<tbody>\n");
            for (i += 2; i < lines.size() && lines[i].trimmed().startsWith(QLatin1Char('|')); ++i) {
                out += QStringLiteral("<tr>");
                for (const QString& cell : tableCells(lines[i]))
                    out += QStringLiteral("<td>%1</td>").arg(inlineHtml(cell));
                out += QStringLiteral("</tr>\n");
            }
            --i;
            out += QStringLiteral("</tbody>\n</table>\n");
            continue;
        }
        paragraph << line.trimmed();
    }
    endParagraph();
    return out;
}

} // namespace rankscope
