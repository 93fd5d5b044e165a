#include "model/trace/gzipinput.h"
#include "model/trace/kinetoreader.h"
#include "tests/support/gzip.h"
#include "tests/support/testfiles.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace rankscope;

namespace {

// Text that deflates about 3:1, so a few MB give a compressed stream many input buffers long.
QByteArray text(qsizetype bytes, quint32 seed)
{
    static const char* const words[] = {"all_reduce",    "ncclKernel",    "\"ts\": ", "cudaLaunch",
                                        "{\"ph\":\"X\"", "ProfilerStep#", ",\n",      "aten::mm"};
    QByteArray out;
    out.reserve(bytes + 32);
    quint32 x = seed;
    while (out.size() < bytes) {
        x = x * 1103515245u + 12345u;
        out += words[(x >> 16) & 7];
        out += QByteArray::number(x >> 20);
    }
    out.truncate(bytes);
    return out;
}

int openFile(const QString& path)
{
    return ::open(QFile::encodeName(path).constData(), O_RDONLY);
}

struct Drained {
    QByteArray bytes;
    bool failed = false;
    std::string error;
};

// Everything `read` gives, `chunk` bytes at a time, until its end or error.
template <typename Reader> Drained drain(Reader& in, std::size_t chunk)
{
    Drained d;
    std::vector<char> buf(chunk);
    for (;;) {
        const std::int64_t got = in.read(buf.data(), chunk);
        if (got < 0) {
            d.failed = true;
            d.error = in.error();
            break;
        }
        if (got == 0) break;
        d.bytes.append(buf.data(), qsizetype(got));
    }
    return d;
}

Drained drainFile(const QString& path, std::size_t chunk)
{
    GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
    return drain(in, chunk);
}

} // namespace

class TestGzipInput : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void plainFilesPassThrough();
    void everyMemberIsRead_data();
    void everyMemberIsRead();
    void cutStreamEndsWhereCut();
    void smallReadsGiveTheSameBytes();
    void damageIsAnError_data();
    void damageIsAnError();
    void readAheadGivesTheSameBytes();
    void readAheadStopsWhenDropped();
    void skipThenRead();
    void multiMemberTraceReadsLikeThePlainOne();
};

void TestGzipInput::plainFilesPassThrough()
{
    QTemporaryDir dir;
    for (const QByteArray& content :
         {QByteArray(), QByteArray("\x1f"), QByteArray("\x1f\x8a plain"), text(700'000, 1)}) {
        const QString path = dir.filePath(QStringLiteral("plain"));
        writeFile(path, content);
        GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
        QVERIFY(in.isOpen());
        QVERIFY(!in.isCompressed());
        QCOMPARE(in.inputSize(), std::int64_t(content.size()));
        const Drained d = drain(in, 65'536);
        QVERIFY(!d.failed);
        QCOMPARE(d.bytes, content);
    }
    GzipInput closed(-1, GzipInput::Descriptor::Owned);
    QVERIFY(!closed.isOpen());
}

void TestGzipInput::everyMemberIsRead_data()
{
    QTest::addColumn<int>("chunk");
    QTest::addRow("997 bytes") << 997;
    QTest::addRow("4 KB") << 4096;
    QTest::addRow("4 MB") << (4 << 20);
}

// gzip -d reads concatenated members as one stream: sizes around the 256 KB input buffer, an
// empty member, then trailing zero padding, which gzread ignores too.
void TestGzipInput::everyMemberIsRead()
{
    QFETCH(int, chunk);
    QTemporaryDir dir;
    QByteArray raw;
    QByteArray gz;
    quint32 seed = 7;
    for (qsizetype size : {qsizetype(3'000'000), qsizetype(0), qsizetype(10), qsizetype(900'000)}) {
        const QByteArray part = text(size, seed++);
        raw += part;
        gz += gzip(part);
    }
    const std::int64_t members = gz.size();
    gz += QByteArray(300, '\0');
    const QString path = dir.filePath(QStringLiteral("multi.gz"));
    writeFile(path, gz);
    GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
    QVERIFY(in.isCompressed());
    const Drained d = drain(in, std::size_t(chunk));
    QVERIFY2(!d.failed, d.error.c_str());
    QCOMPARE(d.bytes.size(), raw.size());
    QVERIFY(d.bytes == raw);
    QCOMPARE(in.inputOffset(), members); // the padding is not read as input
}

// A download or copy cut short: the bytes before the cut, then the end (as gzread).
void TestGzipInput::cutStreamEndsWhereCut()
{
    QTemporaryDir dir;
    const QByteArray raw = text(2'000'000, 3);
    const QByteArray gz = gzip(raw) + gzip(raw);
    const QString path = dir.filePath(QStringLiteral("cut.gz"));
    for (qsizetype cut :
         {qsizetype(5), gz.size() / 4, gz.size() / 2 - 4, gz.size() / 2 + 1, gz.size() - 1}) {
        writeFile(path, gz.left(cut));
        const Drained d = drainFile(path, 1 << 20);
        QVERIFY2(!d.failed, d.error.c_str());
        QVERIFY(QByteArray(raw + raw).startsWith(d.bytes));
    }
    // Most of what precedes a cut comes out: all but the deflate window's worth.
    writeFile(path, gz.left(gz.size() / 4));
    QVERIFY(drainFile(path, 1 << 20).bytes.size() > raw.size() / 3);
}

// Read 7 bytes at a time, ISA-L holds inflated bytes of input it has taken; they came out only
// with large reads, so small ones lost the end of a stream (fuzz/run's gzip harness found it; the
// input it found is replayed from tests/data/fuzz/gzip).
void TestGzipInput::smallReadsGiveTheSameBytes()
{
    QTemporaryDir dir;
    const QByteArray raw = text(300'000, 5);
    const QByteArray gz = gzip(raw);
    const QString path = dir.filePath(QStringLiteral("x.gz"));
    for (qsizetype cut : {gz.size(), gz.size() - 1, gz.size() / 2}) {
        writeFile(path, gz.left(cut));
        const Drained small = drainFile(path, 7), large = drainFile(path, 1 << 20);
        QVERIFY2(!small.failed && !large.failed, small.error.c_str());
        QCOMPARE(small.bytes.size(), large.bytes.size());
        QVERIFY(small.bytes == large.bytes);
        if (cut == gz.size()) QVERIFY(small.bytes == raw);
    }
    const QDir found(QStringLiteral(RANKSCOPE_TEST_DATA "/fuzz/gzip"));
    const QStringList inputs = found.entryList(QDir::Files);
    QVERIFY(!inputs.isEmpty());
    for (const QString& name : inputs) {
        const Drained small = drainFile(found.filePath(name), 7);
        const Drained large = drainFile(found.filePath(name), 1 << 16);
        QCOMPARE(small.failed, large.failed);
        // Before an error, how much comes out depends on the buffers; what does agrees.
        const qsizetype common = std::min(small.bytes.size(), large.bytes.size());
        QVERIFY2(small.bytes.left(common) == large.bytes.left(common), qPrintable(name));
        if (!small.failed) QVERIFY2(small.bytes == large.bytes, qPrintable(name));
    }
}

void TestGzipInput::damageIsAnError_data()
{
    QTest::addColumn<int>("offsetFromEnd"); // of the byte flipped in the second member
    QTest::addColumn<QString>("error");
    QTest::addRow("crc") << 8 << QStringLiteral("incorrect data check");
    QTest::addRow("length") << 1 << QStringLiteral("incorrect data check");
    QTest::addRow("method") << -2 << QStringLiteral("unknown compression method");
    QTest::addRow("deflate data") << -1 << QString();
}

void TestGzipInput::damageIsAnError()
{
    QFETCH(int, offsetFromEnd);
    QFETCH(QString, error);
    QTemporaryDir dir;
    const QByteArray first = text(1'000'000, 11);
    const QByteArray second = text(1'000'000, 12);
    const QByteArray firstGz = gzip(first);
    QByteArray gz = firstGz + gzip(second);
    // -2: the method byte of the second member's header; -1: inside its deflate data.
    const qsizetype at = offsetFromEnd == -2   ? firstGz.size() + 2
                         : offsetFromEnd == -1 ? firstGz.size() + (gz.size() - firstGz.size()) / 2
                                               : gz.size() - offsetFromEnd;
    gz[at] = char(gz[at] ^ 0x5a);
    const QString path = dir.filePath(QStringLiteral("bad.gz"));
    writeFile(path, gz);
    const Drained d = drainFile(path, 1 << 16);
    QVERIFY(d.failed);
    QVERIFY(!d.error.empty());
    if (!error.isEmpty()) QCOMPARE(QString::fromStdString(d.error), error);
    // What came before the damage is given: all of the first member, and all of the second
    // when only its trailer is damaged (damaged deflate data may inflate to anything).
    QVERIFY(d.bytes.startsWith(first));
    if (offsetFromEnd > 0) QVERIFY(d.bytes == QByteArray(first + second));
}

void TestGzipInput::readAheadGivesTheSameBytes()
{
    QTemporaryDir dir;
    const QByteArray raw = text(3'000'000, 21);
    const QString path = dir.filePath(QStringLiteral("a.gz"));
    QByteArray gz = gzip(raw.left(1'000'000)) + gzip(raw.mid(1'000'000));
    writeFile(path, gz);
    for (std::size_t window : {std::size_t(997), std::size_t(1) << 22}) {
        GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
        ReadAhead ahead(in, window, 2);
        const Drained d = drain(ahead, 10'000);
        QVERIFY(!d.failed);
        QVERIFY(d.bytes == raw);
        QCOMPARE(ahead.inputOffset(), std::int64_t(gz.size()));
        char byte = 0;
        QCOMPARE(ahead.read(&byte, 1), std::int64_t(0)); // the end stays the end
    }
    // An error reaches the consumer after the bytes before it.
    gz[gz.size() - 8] = char(gz[gz.size() - 8] ^ 1);
    writeFile(path, gz);
    GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
    ReadAhead ahead(in, 65'536, 3);
    const Drained d = drain(ahead, 10'000);
    QVERIFY(d.failed);
    QCOMPARE(QString::fromStdString(d.error), QStringLiteral("incorrect data check"));
    QVERIFY(raw.startsWith(d.bytes) && d.bytes.size() >= 1'000'000);
}

// A consumer that stops early (cancelled, an error in the JSON) must not leave the inflate
// thread running or blocked: destruction returns.
void TestGzipInput::readAheadStopsWhenDropped()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("a.gz"));
    writeFile(path, gzip(text(5'000'000, 31)));
    for (int taken : {0, 1, 50}) {
        GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
        ReadAhead ahead(in, 4096, 2);
        char buf[1000];
        for (int i = 0; i < taken; ++i)
            QVERIFY(ahead.read(buf, sizeof buf) > 0);
    }
}

void TestGzipInput::skipThenRead()
{
    QTemporaryDir dir;
    const QByteArray raw = text(3'000'000, 41);
    const QString path = dir.filePath(QStringLiteral("a.gz"));
    writeFile(path, gzip(raw.left(5)) + gzip(raw.mid(5)));
    for (std::int64_t offset : {std::int64_t(0), std::int64_t(3), std::int64_t(2'500'001)}) {
        GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
        QVERIFY(in.skip(offset));
        char buf[100];
        QCOMPARE(in.read(buf, sizeof buf), std::int64_t(sizeof buf));
        QCOMPARE(QByteArray(buf, sizeof buf), raw.mid(qsizetype(offset), sizeof buf));
    }
    GzipInput in(openFile(path), GzipInput::Descriptor::Owned);
    QVERIFY(!in.skip(raw.size() + 1));
}

// The Kineto reader over gzip's concatenated members (as `cat a.gz b.gz` or a parallel gzip
// write them): the events the JSON holds, counted here with nlohmann_json.
void TestGzipInput::multiMemberTraceReadsLikeThePlainOne()
{
    QTemporaryDir dir;
    std::string json = R"({"traceEvents": [)";
    for (int i = 0; i < 60'000; ++i)
        json += (i ? "," : "") + std::string(R"({"ph":"X","name":"k)") + std::to_string(i % 97) +
                R"(","pid":1,"tid":)" + std::to_string(i % 3) + R"(,"ts":)" +
                std::to_string(i * 10) + R"(,"dur":5})";
    json += "]}";
    const nlohmann::json parsed = nlohmann::json::parse(json);
    const auto expected = std::int64_t(parsed["traceEvents"].size());
    const QByteArray raw = QByteArray::fromStdString(json);
    QByteArray gz;
    for (qsizetype at = 0; at < raw.size(); at += 700'001)
        gz += gzip(raw.mid(at, 700'001));
    const QString path = dir.filePath(QStringLiteral("rank0.json.gz"));
    writeFile(path, gz);
    EventStore store;
    const KinetoReadResult r = KinetoReader::readFile(path.toStdString(), store, {});
    QCOMPARE(int(r.status), int(SourceStatus::Ok));
    QCOMPARE(r.events, expected);
    QCOMPARE(r.bytes, std::int64_t(raw.size()));
    QCOMPARE(store.eventCount(), expected);
}

QTEST_GUILESS_MAIN(TestGzipInput)
#include "tst_gzipinput.moc"
