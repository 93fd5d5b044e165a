#include "model/trace/picklereader.h"
#include "tests/support/fuzzinputs.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace rankscope;

class TestPickleReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decodes_data();
    void decodes();
    void sharedMemoContainer();
    void refuses_data();
    void refuses();
    void depthIsBounded();
    void fuzzRegressions();
};

void TestPickleReader::decodes_data()
{
    QTest::addColumn<QByteArray>("pickle");
    QTest::addColumn<QString>("json");
    // Bytes as python3's pickle.dumps(value, protocol=N) writes them.
    QTest::newRow("dict p2") << QByteArray("\x80\x02}q\x00(X\x01\x00\x00\x00"
                                           "aq\x01K\x01X\x01\x00\x00\x00"
                                           "bq\x02]q\x03(\x88\x89Neu.",
                                           34)
                             << R"({"a":1,"b":[true,false,null]})";
    QTest::newRow("tuple p4 framed") << QByteArray("\x80\x04\x95\x0f\x00\x00\x00\x00\x00\x00\x00"
                                                   "\x8c\x01x\x94J\xff\xff\xff\xff\x86\x94.",
                                                   23)
                                     << R"(["x",-1])";
    QTest::newRow("long1 big") << QByteArray("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x10.",
                                             13)
                               << "1152921504606846976";
    QTest::newRow("long1 negative") << QByteArray("\x80\x02\x8a\x02\x00\xff.", 7) << "-256";
    QTest::newRow("float") << QByteArray("\x80\x02G?\xf8\x00\x00\x00\x00\x00\x00.", 12) << "1.5";
    QTest::newRow("int keys") << QByteArray("\x80\x02}q\x00K\x03K\x04s.", 11) << R"({"3":4})";
    QTest::newRow("binint2 empty tuple")
        << QByteArray("\x80\x02M\x10\x27)\x86.", 8) << "[10000,[]]";
}

void TestPickleReader::decodes()
{
    QFETCH(QByteArray, pickle);
    QFETCH(QString, json);
    QString error;
    const auto value = PickleReader::decode(pickle, &error);
    QVERIFY2(value, qPrintable(error));
    QCOMPARE(QString::fromStdString(value->dump()), json);
}

void TestPickleReader::sharedMemoContainer()
{
    // x = []; pickle.dumps([x, x], 2): the second element is a memo GET of the first.
    const QByteArray p("\x80\x02]q\x00(]q\x01h\x01"
                       "e.",
                       13);
    QString error;
    const auto value = PickleReader::decode(p, &error);
    QVERIFY2(value, qPrintable(error));
    QCOMPARE(QString::fromStdString(value->dump()), QStringLiteral("[[],[]]"));
    // A dict filled after it was memoised: {"k": [1]} with the list appended later.
    const QByteArray q("\x80\x02}q\x00X\x01\x00\x00\x00k]q\x01s\x68\x01K\x01"
                       "a0.",
                       22);
    const auto v2 = PickleReader::decode(q, &error);
    QVERIFY2(v2, qPrintable(error));
    QCOMPARE(QString::fromStdString(v2->dump()), QStringLiteral(R"({"k":[1]})"));
}

void TestPickleReader::refuses_data()
{
    QTest::addColumn<QByteArray>("pickle");
    QTest::addColumn<QString>("says");
    QTest::newRow("global") << QByteArray("\x80\x02\x63os\nsystem\n.", 14) << "GLOBAL";
    QTest::newRow("stack_global") << QByteArray("\x80\x04\x8c\x02os\x8c\x06system\x93.", 16)
                                  << "STACK_GLOBAL";
    QTest::newRow("reduce") << QByteArray("\x80\x02)R.", 5) << "REDUCE";
    QTest::newRow("build") << QByteArray("\x80\x02}}b.", 6) << "BUILD";
    QTest::newRow("inst") << QByteArray("\x80\x02(ios\nsystem\n.", 15) << "INST";
    QTest::newRow("obj") << QByteArray("\x80\x02(o.", 5) << "OBJ";
    QTest::newRow("newobj") << QByteArray("\x80\x02))\x81.", 6) << "NEWOBJ";
    QTest::newRow("protocol 0") << QByteArray("(dp0\n.", 6) << "PUT";
    QTest::newRow("protocol 1 opcode after p2") << QByteArray("\x80\x02I1\n.", 6) << "INT";
    QTest::newRow("protocol 6") << QByteArray("\x80\x06N.", 4) << "protocol 6";
    QTest::newRow("truncated") << QByteArray("\x80\x02}q\x00(X\x05\x00\x00\x00"
                                             "ab",
                                             13)
                               << "truncated";
    QTest::newRow("no stop") << QByteArray("\x80\x02N", 3) << "STOP";
    QTest::newRow("empty") << QByteArray() << "STOP";
    QTest::newRow("two values") << QByteArray("\x80\x02NN.", 5) << "2 values";
    QTest::newRow("unknown memo") << QByteArray("\x80\x02h\x07.", 5) << "memo";
    QTest::newRow("append to dict") << QByteArray("\x80\x02}Na.", 6) << "not a list";
    QTest::newRow("underflow") << QByteArray("\x80\x02s.", 4) << "underflow";
    QTest::newRow("huge string length")
        << QByteArray("\x80\x02X\xff\xff\xff\x7f", 7) << "truncated";
}

void TestPickleReader::refuses()
{
    QFETCH(QByteArray, pickle);
    QFETCH(QString, says);
    QString error;
    QVERIFY(!PickleReader::decode(pickle, &error));
    QVERIFY2(error.contains(says), qPrintable(error));
    QVERIFY(!error.contains(QLatin1Char('\n')));
}

void TestPickleReader::depthIsBounded()
{
    // [[[[...]]]] 10 000 deep: refused, never a stack overflow.
    QByteArray p("\x80\x02", 2);
    for (int i = 0; i < 10000; ++i)
        p.append("]");
    for (int i = 0; i < 9999; ++i)
        p.append("a");
    p.append(".");
    QString error;
    QVERIFY(!PickleReader::decode(p, &error));
    QVERIFY2(error.contains(QLatin1String("nesting")), qPrintable(error));
    // x = [x0]; each level holds the previous twice: 2^40 values if expanded.
    QByteArray q("\x80\x02]q\x00", 5);
    for (int i = 0; i < 40; ++i)
        q.append("0h\x00h\x00\x86q\x00", 8);
    q.append(".");
    QVERIFY(!PickleReader::decode(q, &error, PickleReader::Limits{200, 100'000}));
    QVERIFY2(error.contains(QLatin1String("limit")) || error.contains(QLatin1String("nesting")),
             qPrintable(error));
}

// Inputs the fuzzer found once; each must be answered with a value or an error.
void TestPickleReader::fuzzRegressions()
{
    const auto inputs = test::fuzzInputs("pickle");
    QVERIFY(!inputs.empty());
    for (const auto& [name, bytes] : inputs) {
        QString error;
        const auto value = PickleReader::decode(bytes, &error);
        QVERIFY2(value || !error.isEmpty(), qPrintable(name));
    }
}

QTEST_GUILESS_MAIN(TestPickleReader)
#include "tst_picklereader.moc"
