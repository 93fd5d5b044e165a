#include "model/analysisreport.h"
#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"
#include "model/report/investigationreport.h"
#include "model/report/markdownhtml.h"
#include "model/tracesession.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

class TestInvestigationReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void markdownHasEverything();
    void htmlIsSelfContained();
    void writesByExtension();
    void markdownHtml_data();
    void markdownHtml();
    void wholeMicros();

private:
    QTemporaryDir m_db;
    SessionPtr m_session;
    std::unique_ptr<InvestigationStore> m_store;
    qint64 m_id = -1;
    QString m_pattern;
    QByteArray m_png;
};

void TestInvestigationReport::initTestCase()
{
    m_session = loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout"));
    QVERIFY(m_session);
    QVERIFY(!m_session->analysis.findings.empty());
    m_store = std::make_unique<InvestigationStore>(m_db.path());
    m_id = m_store->openInvestigation(m_session->folder.path());
    QVERIFY(m_id > 0);
    m_pattern = QStringLiteral("fix-communication-configuration");
    QVERIFY(m_store->setStepState(m_id, m_pattern, 0, StepStatus::Done,
                                  QStringLiteral("MASTER_PORT 41349 | same on all")));
    QVERIFY(m_store->setStepState(m_id, m_pattern, 2, StepStatus::Skipped, QString()));
    QVERIFY(m_store->setNotes(m_id, QStringLiteral("rank 1 stalls at step 3 <b>not</b> html")));
    QVERIFY(m_store->addBookmark(m_id, 1'000'000, 5'000'000, QStringLiteral("the stall")) > 0);
    // Any bytes: the model embeds what the GUI rendered.
    m_png = QByteArray("\x89PNG\r\n\x1a\nnot really an image", 28);
}

void TestInvestigationReport::markdownHasEverything()
{
    InvestigationReport report(*m_session);
    report.readInvestigation(*m_store, m_id);
    report.setTimelinePng(m_png);
    const QString md = report.toMarkdown();

    // The analysis section is `rankscope analyze --format markdown`, headings one level down.
    const QString analysis = AnalysisReport::toMarkdown(*m_session, m_session->analysis);
    for (QString line : analysis.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1Char('#'))) line.prepend(QLatin1Char('#'));
        QVERIFY2(md.contains(line), qPrintable(line));
    }
    for (const Finding& f : m_session->analysis.findings) {
        QVERIFY(md.contains(QString::fromStdString(f.id)));
        for (const Evidence& e : f.evidence)
            QVERIFY2(md.contains(QString::fromStdString(e.path)), e.path.c_str());
    }
    // Checklist state and notes.
    const Walkthrough* w = Taxonomy::instance().walkthrough(m_pattern);
    QVERIFY(w);
    QVERIFY(md.contains(w->title));
    QVERIFY(md.contains(QStringLiteral("| 1 | %1 | Done |").arg(w->steps[0].title)));
    QVERIFY(md.contains(QStringLiteral("| 3 | %1 | Skipped |").arg(w->steps[2].title)));
    QVERIFY(md.contains(QStringLiteral("MASTER_PORT 41349 \\| same on all")));
    QVERIFY(md.contains(QStringLiteral("rank 1 stalls at step 3")));
    // The bookmark from 1,000,000 to 5,000,000 ns, in whole microseconds.
    QVERIFY(md.contains(QStringLiteral("| the stall | 1000 µs | 5000 µs |")));
    // Auto-checks with their outcome, and the steps they pre-fill.
    for (const AutoCheckResult& r : m_session->autoChecks)
        QVERIFY(md.contains(
            QStringLiteral("### `%1` · %2").arg(r.checkId, autoCheckOutcomeLabel(r.outcome))));
    QVERIFY(md.contains(QStringLiteral("(from the auto-check)")));
    QVERIFY(md.contains(QStringLiteral("data:image/png;base64,") +
                        QString::fromLatin1(m_png.toBase64())));
}

void TestInvestigationReport::htmlIsSelfContained()
{
    InvestigationReport report(*m_session);
    report.readInvestigation(*m_store, m_id);
    report.setTimelinePng(m_png);
    const QString html = report.toHtml();
    QVERIFY(html.startsWith(QLatin1String("<!DOCTYPE html>")));
    for (const char* external :
         {"http://", "https://", "<link", "<script", "url(", "@import", "file:"})
        QVERIFY2(!html.contains(QLatin1String(external), Qt::CaseInsensitive), external);
    static const QRegularExpression src(QStringLiteral("\\bsrc=\"([^\"]*)\""));
    int images = 0;
    for (auto it = src.globalMatch(html); it.hasNext(); ++images)
        QVERIFY(it.next().captured(1).startsWith(QLatin1String("data:image/png;base64,")));
    QCOMPARE(images, 1);
    // The same findings, checklist and notes, escaped.
    for (const Finding& f : m_session->analysis.findings)
        QVERIFY(html.contains(QString::fromStdString(f.summary).toHtmlEscaped()));
    QVERIFY(html.contains(QStringLiteral("rank 1 stalls at step 3 &lt;b&gt;not&lt;/b&gt; html")));
    QVERIFY(html.contains(QStringLiteral("<td>MASTER_PORT 41349 | same on all</td>")));
    QVERIFY(html.contains(QStringLiteral("<td>Done</td>")));
}

void TestInvestigationReport::writesByExtension()
{
    QTemporaryDir dir;
    InvestigationReport report(*m_session);
    report.readInvestigation(*m_store, m_id);
    QString error;
    QVERIFY2(report.writeFile(dir.filePath(QStringLiteral("r.html")), &error), qPrintable(error));
    QVERIFY2(report.writeFile(dir.filePath(QStringLiteral("r.md")), &error), qPrintable(error));
    QFile html(dir.filePath(QStringLiteral("r.html")));
    QFile md(dir.filePath(QStringLiteral("r.md")));
    QVERIFY(html.open(QIODevice::ReadOnly) && md.open(QIODevice::ReadOnly));
    QVERIFY(html.readAll().startsWith("<!DOCTYPE html>"));
    QVERIFY(md.readAll().startsWith("# RankScope investigation report"));
    QVERIFY(!report.writeFile(dir.filePath(QStringLiteral("no/such/dir/r.md")), &error));
    QVERIFY(!error.isEmpty());
}

void TestInvestigationReport::markdownHtml_data()
{
    QTest::addColumn<QString>("markdown");
    QTest::addColumn<QString>("html");
    QTest::newRow("heading") << QStringLiteral("## A `b`")
                             << QStringLiteral("<h2>A <code>b</code></h2>\n");
    QTest::newRow("list") << QStringLiteral("- one\n- **two**")
                          << QStringLiteral(
                                 "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>\n");
    QTest::newRow("table") << QStringLiteral("| a | b |\n| --- | --- |\n| x \\| y | `p\\|q` |")
                           << QStringLiteral(
                                  "<table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n"
                                  "<tbody>\n<tr><td>x | y</td><td><code>p|q</code></td></tr>\n"
                                  "</tbody>\n</table>\n");
    QTest::newRow("fence") << QStringLiteral("```\n<x> # not a heading\n```")
                           << QStringLiteral("<pre>&lt;x&gt; # not a heading</pre>\n");
    QTest::newRow("paragraph") << QStringLiteral("a <b>\nc\n\nd")
                               << QStringLiteral("<p>a &lt;b&gt; c</p>\n<p>d</p>\n");
    QTest::newRow("image") << QStringLiteral("![T](data:image/png;base64,AA==)")
                           << QStringLiteral(
                                  "<p><img alt=\"T\" src=\"data:image/png;base64,AA==\"></p>\n");
}

void TestInvestigationReport::markdownHtml()
{
    QFETCH(QString, markdown);
    QFETCH(QString, html);
    QCOMPARE(MarkdownHtml::render(markdown), html);
}

// Trace positions print rounded to the nearest microsecond, the number alone.
void TestInvestigationReport::wholeMicros()
{
    QCOMPARE(AnalysisReport::wholeMicros(0), QStringLiteral("0"));
    QCOMPARE(AnalysisReport::wholeMicros(1'499), QStringLiteral("1"));
    QCOMPARE(AnalysisReport::wholeMicros(1'501), QStringLiteral("2"));
    QCOMPARE(AnalysisReport::wholeMicros(1'234'567'891), QStringLiteral("1234568"));
}

QTEST_GUILESS_MAIN(TestInvestigationReport)
#include "tst_investigationreport.moc"
