#include "model/trace/picklereader.h"
#include "tests/support/fuzzinputs.h"
#include "tests/support/picklewriter.h"

#include <QDebug>
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
    void budgetsStopWhileDecoding_data();
    void budgetsStopWhileDecoding();
    void byteBudgetBeforeTheEntriesIsAnError();
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

void TestPickleReader::budgetsStopWhileDecoding_data()
{
    QTest::addColumn<int>("batch");
    QTest::newRow("python pickler, batches of 1000") << 1000;
    QTest::newRow("torch c++ pickler, one batch") << 0;
    QTest::newRow("batches of 7") << 7;
}

// A dump of 50 entries (written in the test): an entry budget of 20 keeps entries 1-20 and the
// keys before "entries"; 50 or more cuts nothing; 0 keeps none. A byte budget keeps whole entries
// only, in order, and stops within one value of the budget.
void TestPickleReader::budgetsStopWhileDecoding()
{
    QFETCH(int, batch);
    const QByteArray pickle = test::flightRecorderPickle(50, batch);
    const auto decode = [&](std::int64_t entries, std::int64_t bytes,
                            PickleReader::Outcome* outcome) {
        PickleReader::Limits limits;
        limits.maxEntries = entries;
        limits.maxBytes = bytes;
        QString error;
        std::optional<nlohmann::json> value = PickleReader::decode(pickle, &error, limits, outcome);
        if (!value) qWarning() << error;
        return value.value_or(nlohmann::json());
    };
    PickleReader::Outcome outcome;
    nlohmann::json v = decode(20, -1, &outcome);
    QCOMPARE(outcome.stop, PickleReader::Stop::Entries);
    QCOMPARE(outcome.entries, std::int64_t(20));
    QCOMPARE(v["entries"].size(), std::size_t(20));
    for (int i = 0; i < 20; ++i) {
        QCOMPARE(v["entries"][i]["record_id"].get<int>(), i + 1);
        QCOMPARE(v["entries"][i]["frames"][0]["line"].get<int>(), i + 1);
    }
    QCOMPARE(v["version"].get<std::string>(), std::string("2.5"));
    QCOMPARE(v["pg_config"]["0"]["ranks"].get<std::string>(), std::string("[0, 1]"));
    for (const std::int64_t all : {50, 51, 1000}) {
        v = decode(all, -1, &outcome);
        QCOMPARE(outcome.stop, PickleReader::Stop::None);
        QCOMPARE(v["entries"].size(), std::size_t(50));
    }
    v = decode(0, -1, &outcome);
    QCOMPARE(outcome.stop, PickleReader::Stop::Entries);
    QVERIFY(v["entries"].empty());

    // The whole decode's bytes, then a third of them as the budget.
    decode(-1, -1, &outcome);
    const std::int64_t whole = outcome.bytes;
    v = decode(-1, whole / 3, &outcome);
    QCOMPARE(outcome.stop, PickleReader::Stop::Bytes);
    const std::size_t kept = v["entries"].size();
    QVERIFY2(kept > 0 && kept < 50, qPrintable(QString::number(kept)));
    QCOMPARE(outcome.entries, std::int64_t(kept));
    QVERIFY(outcome.bytes <= whole / 3 + 256);
    for (std::size_t i = 0; i < kept; ++i) {
        const nlohmann::json& e = v["entries"][i];
        QCOMPARE(e.size(), std::size_t(6));
        QCOMPARE(e["record_id"].get<std::size_t>(), i + 1);
        QCOMPARE(e["frames"].size(), std::size_t(1));
        QCOMPARE(e["frames"][0].size(), std::size_t(3));
    }
}

// A byte budget reached before the entries list leaves nothing to keep: an error naming it.
void TestPickleReader::byteBudgetBeforeTheEntriesIsAnError()
{
    const QByteArray pickle = test::flightRecorderPickle(5, 1000);
    PickleReader::Limits limits;
    limits.maxBytes = 200;
    QString error;
    QVERIFY(!PickleReader::decode(pickle, &error, limits));
    QVERIFY2(error.contains(QLatin1String("budget of 200 bytes before any Flight Recorder entry")),
             qPrintable(error));
}

QTEST_GUILESS_MAIN(TestPickleReader)
#include "tst_picklereader.moc"
