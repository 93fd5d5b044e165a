#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"
#include "model/trace/logreader.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace rankscope;

// The 38 leaf ids of the taxonomy derived from the study's CSV.
static QSet<QString> leafIds()
{
    const QStringList leaves = Taxonomy::instance().leaves();
    return QSet<QString>(leaves.begin(), leaves.end());
}

class TestSignatures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loads();
    void symptomsAreLeaves();
    void everyLeafIsReachable();
    void everyRule_data();
    void everyRule();
    void adviceIsNotAnError_data();
    void adviceIsNotAnError();
    void hedgedConsequenceIsNoSymptom();
    void linesNameTheirLeaf_data();
    void linesNameTheirLeaf();
    void badDataIsReported();
    void witnessIsReadFromTheData();
    void lineOffsetsAreHonoured();
    void logCorpusMatchesLineByLine();
    void literalIndexMatchesFind();
    void newlinesAreCounted();
    void leafPagesNameTheirFrameworks();
};

void TestSignatures::loads()
{
    const SignatureSet& set = SignatureSet::builtin();
    QVERIFY(set.signatures().size() >= 120);
    QVERIFY(!set.stages().isEmpty());
    QVERIFY(!set.frameworks().isEmpty());
    QSet<QString> ids;
    for (const Signature& s : set.signatures()) {
        QVERIFY2(!ids.contains(s.id), qPrintable(s.id));
        ids.insert(s.id);
    }
}

void TestSignatures::symptomsAreLeaves()
{
    const QSet<QString> leaves = leafIds();
    QCOMPARE(leaves.size(), 38);
    for (const Signature& s : SignatureSet::builtin().signatures()) {
        QVERIFY2(leaves.contains(s.symptom), qPrintable(s.id + QLatin1String(" -> ") + s.symptom));
        if (!s.earlyField.isEmpty())
            QVERIFY2(leaves.contains(s.earlySymptom),
                     qPrintable(s.id + QLatin1String(" -> ") + s.earlySymptom));
    }
}

// Each leaf but the study's catch-all "others" can be proposed: some rule names it, or a stage
// remap leads to it. The remap targets must be leaves too.
void TestSignatures::everyLeafIsReachable()
{
    const SignatureSet& set = SignatureSet::builtin();
    QSet<QString> reachable;
    for (const Signature& s : set.signatures())
        reachable.insert(s.symptom);
    const QSet<QString> leaves = leafIds();
    for (const QString& target : set.remapTargets()) {
        QVERIFY2(leaves.contains(target), qPrintable(target));
        reachable.insert(target);
    }
    for (const QString& leaf : leaves)
        if (!leaf.endsWith(QLatin1String("/others")))
            QVERIFY2(reachable.contains(leaf), qPrintable(leaf));
}

void TestSignatures::everyRule_data()
{
    QTest::addColumn<int>("rule");
    const QList<Signature>& all = SignatureSet::builtin().signatures();
    for (int i = 0; i < all.size(); ++i)
        QTest::addRow("%s", qPrintable(all[i].id)) << i;
}

// Each rule matches its positive line through the whole scan path (literal prefilter, advice
// stripping, regex) and does not match its near-miss negative line.
void TestSignatures::everyRule()
{
    QFETCH(int, rule);
    const SignatureSet& set = SignatureSet::builtin();
    const Signature& s = set.signatures()[rule];
    QVERIFY2(!s.positive.isEmpty() && !s.negative.isEmpty(), "positive and negative lines");
    auto matches = [&](const QString& line) {
        const QByteArray bytes = QByteArray("some preceding line\n") + line.toUtf8() + "\n";
        for (const SignatureHit& h : set.scan(bytes, {}, true))
            if (h.rule == rule) return h.line == 1;
        return false;
    };
    QVERIFY2(matches(s.positive), qPrintable(s.positive));
    QVERIFY2(!matches(s.negative), qPrintable(s.negative));
    // A cue that reads negation skips its "negated" example because of the negation alone.
    if (s.readsNegation()) {
        QVERIFY2(s.regex.match(s.negated).hasMatch(), qPrintable(s.negated));
        QVERIFY2(!matches(s.negated), qPrintable(s.negated));
        QVERIFY2(matches(s.negated + QStringLiteral(", then ") + s.positive),
                 "an affirmed match after a negated one counts");
    }
}

void TestSignatures::adviceIsNotAnError_data()
{
    QTest::addColumn<QString>("line");
    QTest::addRow("nccl-debug") << QStringLiteral("Please run with NCCL_DEBUG=INFO for details.");
    QTest::addRow("launch-blocking")
        << QStringLiteral("For debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
    QTest::addRow("async") << QStringLiteral(
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.");
    QTest::addRow("dsa") << QStringLiteral(
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.");
    QTest::addRow("horovod-template-hang") << QStringLiteral(
        "2. If your question is about hang, did you read [this doc](https://github.com/horovod/"
        "horovod/blob/master/docs/running.rst)?");
    QTest::addRow("template-gcc") << QStringLiteral("11. GCC version: 9.4.0");
    QTest::addRow("tf-template-install")
        << QStringLiteral("- TensorFlow installed from (source or binary): binary");
    QTest::addRow("elastic") << QStringLiteral(
        "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html");
    // Warnings of healthy runs under today's launchers that name a hang or a limitation.
    QTest::addRow("kernel-version") << QStringLiteral(
        "Detected kernel version 5.4.0, which is below the recommended minimum of 5.5.0; this "
        "can cause the process to hang. It is recommended to upgrade the kernel to the minimum "
        "version or higher.");
    QTest::addRow("barrier-device") << QStringLiteral(
        "[rank0]:[W ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform "
        "barrier as devices used by this process are currently unknown. This can potentially "
        "cause a hang if this rank to GPU mapping is incorrect.");
    QTest::addRow("pg-not-destroyed") << QStringLiteral(
        "[rank0]:[W1205 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
        "destroyed before we destruct ProcessGroupNCCL. This warning can point to a hang.");
    QTest::addRow("hf-model-type") << QStringLiteral(
        "You are using a model of type mistral to instantiate a model of type llama. This is not "
        "supported for all configurations of models and can yield errors.");
    QTest::addRow("use-cache") << QStringLiteral(
        "`use_cache=True` is incompatible with gradient checkpointing. Setting "
        "`use_cache=False`.");
}

void TestSignatures::adviceIsNotAnError()
{
    QFETCH(QString, line);
    // Neither a log signature nor a prose cue may fire on advice or issue-template boilerplate:
    // the ranking is the base rates alone.
    for (const Candidate& c : SymptomClassifier::instance().classify(line.toUtf8()))
        QVERIFY2(c.evidence.isEmpty() && c.score == 0.0, qPrintable(c.symptom));
}

// RCCL warns on every healthy start that a missing kernel option "can lead to system instability
// or hang": what could happen is not what happened. The line still names NCCL (a frame of what
// was done), but no hang.
void TestSignatures::hedgedConsequenceIsNoSymptom()
{
    const QByteArray line = "node1:111:111 [0] init.cpp:120 NCCL WARN Missing \"iommu=pt\" from "
                            "kernel command line which can lead to system instablity or hang!";
    for (const Candidate& c : SymptomClassifier::instance().classify(line))
        if (c.symptom.endsWith(QLatin1String("hang")) ||
            c.symptom.endsWith(QLatin1String("hang-and-timeout")))
            QVERIFY2(c.evidence.isEmpty(), qPrintable(c.symptom));
    const QByteArray hang = "NCCL WARN Missing \"iommu=pt\" from kernel command line; the job "
                            "hangs at the first all_reduce";
    QCOMPARE(SymptomClassifier::instance().classify(hang).first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
}

void TestSignatures::linesNameTheirLeaf_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("leaf");
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // Horovod's stall inspector names each waiting op with the ranks that did (not) submit it.
    // Ray's memory monitor kills a task for host RAM: not a CUDA out-of-memory.
    QTest::addRow("ray-memory-monitor")
        << QStringLiteral("ray.exceptions.OutOfMemoryError: Task was killed due to the node "
                          "running low on memory.")
        << QStringLiteral("ray.memory-monitor-kill")
        << QStringLiteral("training-and-evaluation/program-failure/memory-issue");
    QTest::addRow("megatron-parallel-group")
        << QStringLiteral("AssertionError: expert parallel group is not initialized")
        << QStringLiteral("megatron.parallel-group-uninitialized")
        << QStringLiteral("communication-setup/setup-failure");
    QTest::addRow("lightning-cuda-before-fork")
        << QStringLiteral("RuntimeError: Lightning can't create new processes if CUDA is already "
                          "initialized.")
        << QStringLiteral("lightning.cuda-initialized-before-fork")
        << QStringLiteral("communication-setup/setup-failure");
    QTest::addRow("orted-missing")
        << QStringLiteral("bash: orted: command not found") << QStringLiteral("mpi.orte-daemons")
        << QStringLiteral("communication-setup/setup-failure");
    // DTensor's missing sharding rule, and the same error as Ray Train wraps it.
    QTest::addRow("dtensor-no-sharding-strategy")
        << QStringLiteral("Operator aten.select.int does not have a sharding strategy registered.")
        << QStringLiteral("py.not-implemented")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error");
    QTest::addRow("ray-wrapped-not-implemented")
        << QStringLiteral("ray.exceptions.RayTaskError(NotImplementedError): "
                          "ray::_RayTrainWorker__execute.get_next() (pid=1555)")
        << QStringLiteral("py.not-implemented")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error");
    QTest::addRow("hub-read-timeout")
        << QStringLiteral(
               "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', "
               "port=443): Read timed out. (read timeout=10)")
        << QStringLiteral("py.download")
        << QStringLiteral("data-and-model-preparation/download-error");
    QTest::addRow("tensors-not-cuda-dense")
        << QStringLiteral("RuntimeError: Tensors must be CUDA and dense")
        << QStringLiteral("torch.tensors-not-cuda-dense")
        << QStringLiteral("training-and-evaluation/program-failure/device-error");
    // torch's device guard (DataParallel, torch.cuda.set_device) for a GPU id the machine lacks:
    // the same failure as CUDA's invalid device ordinal.
    QTest::addRow("invalid-device-id") << QStringLiteral("AssertionError: Invalid device id")
                                       << QStringLiteral("torch.device-ordinal")
                                       << QStringLiteral("data-and-model-preparation/device-error");
    // The Hugging Face Hub unreachable (transformers, huggingface_hub): a download, not the
    // rendezvous, whatever "connect" says.
    QTest::addRow("hub-unreachable")
        << QStringLiteral("OSError: We couldn't connect to 'https://huggingface.co' to load this "
                          "file, couldn't find it in the cached files and it looks like "
                          "meta-llama/Llama-2-7b-hf is not the path to a directory containing a "
                          "file named config.json.")
        << QStringLiteral("py.download")
        << QStringLiteral("data-and-model-preparation/download-error");
    QTest::addRow("hub-offline-cache-miss")
        << QStringLiteral(
               "huggingface_hub.utils._errors.LocalEntryNotFoundError: Connection error, "
               "and we cannot find the requested files in the disk cache. Please try "
               "again or make sure your Internet connection is on.")
        << QStringLiteral("py.download")
        << QStringLiteral("data-and-model-preparation/download-error");
    QTest::addRow("mpi-init-failed")
        << QStringLiteral("*** An error occurred in MPI_Init_thread")
        << QStringLiteral("mpi.init-failed") << QStringLiteral("communication-setup/setup-failure");
    QTest::addRow("lightning-unused-parameters")
        << QStringLiteral("RuntimeError: It looks like your LightningModule has parameters that "
                          "were not used in producing the loss returned by training_step.")
        << QStringLiteral("torch.unfinished-reduction")
        << QStringLiteral("training-and-evaluation/program-failure/others");
    QTest::addRow("horovod-op-missing")
        << QStringLiteral("HorovodAllreduce_DistributedAdamOptimizer_Allreduce_conv2d_kernel_0 "
                          "[missing ranks: 1, 3]")
        << QStringLiteral("horovod.stalled-op") << hang;
    QTest::addRow("horovod-op-ready")
        << QStringLiteral("HorovodBroadcast_dense_bias_0 [ready ranks: 0, 2]")
        << QStringLiteral("horovod.stalled-op") << hang;
    QTest::addRow("horovod-stall-warning")
        << QStringLiteral("[2025-03-02 11:20:05.114530: W horovod/common/stall_inspector.cc:107] "
                          "One or more tensors were submitted to be reduced, gathered or "
                          "broadcasted by subset of ranks and are waiting for remainder of ranks "
                          "for more than 60 seconds.")
        << QStringLiteral("horovod.stall") << hang;
    // The study files a C++ allocation failure under out of memory, not memory issue.
    QTest::addRow("bad-alloc")
        << QStringLiteral("terminate called after throwing an instance of 'std::bad_alloc'")
        << QStringLiteral("host.bad-alloc")
        << QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    QTest::addRow("bad-alloc-what")
        << QStringLiteral("  what():  std::bad_alloc") << QStringLiteral("host.bad-alloc")
        << QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    QTest::addRow("python-memory-error")
        << QStringLiteral("MemoryError: Unable to allocate 12.0 GiB for an array")
        << QStringLiteral("host.memory-error")
        << QStringLiteral("training-and-evaluation/program-failure/memory-issue");
    // The same watchdog line names a preparation hang at one of the group's first collectives
    // (the rule's "early" reading of SeqNum) and a training hang later on.
    const QString watchdog = QStringLiteral(
        "[rank1]:[E1130 10:12:01.482153821 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=%1, OpType=BROADCAST, NumelIn=1024, "
        "NumelOut=1024, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.");
    for (const int seq : {1, 4, 5, 4411})
        QTest::addRow("watchdog-seq-%d", seq)
            << watchdog.arg(seq) << QStringLiteral("torch.watchdog-timeout")
            << (seq <= 4 ? QStringLiteral("data-and-model-preparation/hang-and-timeout") : hang);
    QTest::addRow("horovod-op-done")
        << QStringLiteral("HorovodAllreduce_dense_kernel_0 done on ranks 0, 1") << QString()
        << QString();
}

// A log line alone: the first leaf with evidence, and the rule that gave it (none: no evidence).
void TestSignatures::linesNameTheirLeaf()
{
    QFETCH(QString, line);
    QFETCH(QString, rule);
    QFETCH(QString, leaf);
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    const QList<Candidate> found = SymptomClassifier::instance().classify(line.toUtf8(), logOnly);
    if (leaf.isEmpty()) {
        QVERIFY(found.isEmpty());
        return;
    }
    QVERIFY(!found.isEmpty());
    QCOMPARE(found.first().symptom, leaf);
    QVERIFY(!found.first().evidence.isEmpty());
    QCOMPARE(found.first().evidence.first().signature, rule);
}

void TestSignatures::badDataIsReported()
{
    QString error;
    QVERIFY(SignatureSet::fromJson("{", "{}", &error).isEmpty());
    QVERIFY(!error.isEmpty());
    error.clear();
    const QByteArray bad =
        R"({"signatures":[{"id":"x","pattern":"(","symptom":"a/b","literals":["("]}]})";
    QVERIFY(SignatureSet::fromJson(bad, "{}", &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("'x'")), qPrintable(error));
    error.clear();
    const QByteArray badNegation = R"({"negation":"(no"})";
    QVERIFY(SignatureSet::fromJson("{}", badNegation, &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("'negation'")), qPrintable(error));
    error.clear();
    const QByteArray pinnedCascade = R"({"signatures":[{"id":"z","pattern":"a","symptom":"a/b",)"
                                     R"("literals":["a"],"role":"cascade","pins_stage":true}]})";
    QVERIFY(SignatureSet::fromJson(pinnedCascade, "{}", &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("'z'")) && error.contains(QLatin1String("pins_stage")),
             qPrintable(error));
    // 'early' must read a named group of the rule's own pattern, on a root rule.
    for (const char* early :
         {R"("role":"root","early":{"field":"n","at_most":4,"symptom":"c/d"})",
          R"("role":"cascade","early":{"field":"seq","at_most":4,"symptom":"c/d"})",
          R"("role":"root","early":{"field":"seq","symptom":"c/d"})"}) {
        error.clear();
        const QByteArray rule =
            QByteArray(R"j({"signatures":[{"id":"w","pattern":"a(?<seq>[0-9]+)",)j"
                       R"("symptom":"a/b","literals":["a"],)") +
            early + "}]}";
        QVERIFY2(SignatureSet::fromJson(rule, "{}", &error).isEmpty(), early);
        QVERIFY2(error.contains(QLatin1String("'w'")) && error.contains(QLatin1String("early")),
                 qPrintable(error));
    }
}

// Each rule's "witness" in taxonomy/signatures.json, read here as plain JSON, is the loaded
// rule's typed witness; a witness the loader does not know is an error that names the rule.
void TestSignatures::witnessIsReadFromTheData()
{
    QFile file(QStringLiteral(":/taxonomy/signatures.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray rules = QJsonDocument::fromJson(file.readAll())
                                 .object()
                                 .value(QLatin1String("signatures"))
                                 .toArray();
    // The log signatures come first, in file order; the cues follow them.
    const QList<Signature>& loaded = SignatureSet::builtin().signatures();
    QVERIFY(loaded.size() >= rules.size());
    int peer = 0, mismatch = 0, wait = 0;
    for (qsizetype i = 0; i < rules.size(); ++i) {
        const QString witness = rules[i].toObject().value(QLatin1String("witness")).toString();
        const SignatureWitness expected =
            witness == QLatin1String("peer_failure")          ? SignatureWitness::PeerFailure
            : witness == QLatin1String("collective_mismatch") ? SignatureWitness::CollectiveMismatch
            : witness == QLatin1String("collective_wait")     ? SignatureWitness::CollectiveWait
                                                              : SignatureWitness::None;
        QCOMPARE(loaded[i].id, rules[i].toObject().value(QLatin1String("id")).toString());
        QVERIFY2(loaded[i].witness == expected, qPrintable(loaded[i].id));
        peer += expected == SignatureWitness::PeerFailure;
        mismatch += expected == SignatureWitness::CollectiveMismatch;
        wait += expected == SignatureWitness::CollectiveWait;
    }
    QVERIFY(peer >= 2 && mismatch >= 2 && wait >= 1);
    QString error;
    const QByteArray bad = R"({"signatures":[{"id":"y","pattern":"a","symptom":"a/b",)"
                           R"("literals":["a"],"witness":"bystander"}]})";
    QVERIFY(SignatureSet::fromJson(bad, "{}", &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("'y'")) && error.contains(QLatin1String("bystander")),
             qPrintable(error));
}

void TestSignatures::lineOffsetsAreHonoured()
{
    const QByteArray log = "a\nb\nSegmentation fault (core dumped)\n";
    const QList<SignatureHit> hits =
        SignatureSet::builtin().scan(log, SignatureSet::lineStartsOf(log), false);
    QVERIFY(!hits.isEmpty());
    QCOMPARE(hits.first().line, qsizetype(2));
    QCOMPARE(SignatureSet::lineStartsOf(log), (QList<qsizetype>{0, 2, 4}));
}

namespace {

// The log signatures' hits in `log`, "id:line" (0-based), computed line by line from the raw
// bytes and the raw JSON, as the rules are written: a line is a hit of a rule when it contains
// one of the rule's literals and the rule's regex (ASCII word classes) matches its first 4096
// bytes with the advice spans removed; at most 64 lines a rule. Nothing of the scan's machinery
// (line index, literal automaton, decoding cache) is used.
QSet<QString> hitsLineByLine(const QByteArray& log)
{
    QFile file(QStringLiteral(":/taxonomy/signatures.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    QStringList advice;
    for (const QJsonValue& a : json.value(QLatin1String("advice")).toArray())
        advice << QStringLiteral("(?:%1)").arg(
            a.toObject().value(QLatin1String("pattern")).toString());
    const QRegularExpression adviceRe(advice.join(QLatin1Char('|')));
    QList<QByteArray> lines = log.split('\n');
    if (log.endsWith('\n')) lines.removeLast();
    QSet<QString> hits;
    for (const QJsonValue& v : json.value(QLatin1String("signatures")).toArray()) {
        const QJsonObject rule = v.toObject();
        const QString id = rule.value(QLatin1String("id")).toString();
        const QRegularExpression re(rule.value(QLatin1String("pattern")).toString());
        int found = 0;
        for (int i = 0; i < lines.size() && found < 64; ++i) {
            bool literal = false;
            for (const QJsonValue& l : rule.value(QLatin1String("literals")).toArray())
                literal |= lines[i].contains(l.toString().toUtf8());
            if (!literal) continue;
            QByteArray head = lines[i];
            while (head.endsWith('\r'))
                head.chop(1);
            const QString text = QString::fromUtf8(head.left(4096)).remove(adviceRe).trimmed();
            if (!re.match(text).hasMatch()) continue;
            hits.insert(QStringLiteral("%1:%2").arg(id).arg(i));
            ++found;
        }
    }
    return hits;
}

} // namespace

// The scan finds, in every log of the test corpus and in a log made of every rule's example
// lines (CRLF endings, lines longer than what the regexes read, the literal past that head), the
// same hits as the rules applied line by line: through a log as LogReader indexes it (the
// analysis' path, lines read where they lie) and through the text (the classifier's path).
void TestSignatures::logCorpusMatchesLineByLine()
{
    QStringList paths;
    for (QDirIterator it(QStringLiteral(RANKSCOPE_TEST_DATA "/traces"), {QStringLiteral("*.log")},
                         QDir::Files, QDirIterator::Subdirectories);
         it.hasNext();)
        paths << it.next();
    QVERIFY(paths.size() >= 50);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QByteArray examples;
    for (const Signature& s : SignatureSet::builtin().signatures()) {
        if (s.role == SignatureRole::Cue) continue;
        examples += s.positive.toUtf8() + "\n" + s.negative.toUtf8() + "\r\n";
        examples += s.positive.toUtf8() + "\r\n";
        examples += QByteArray(5000, 'x') + ' ' + s.positive.toUtf8() + "\n";
        examples += s.positive.toUtf8() + ' ' + QByteArray(5000, 'y') + "\n";
    }
    QFile out(dir.filePath(QStringLiteral("examples.log")));
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(examples) == examples.size());
    out.close();
    paths << out.fileName();

    const SignatureSet& set = SignatureSet::builtin();
    int withHits = 0;
    for (const QString& path : std::as_const(paths)) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        const QSet<QString> expected = hitsLineByLine(bytes);
        withHits += !expected.isEmpty();

        const LogReader::Result read = LogReader::readFile(path, path, 0, std::nullopt, false);
        QVERIFY2(read.ok && read.streams.size() == 1, qPrintable(path));
        const RankLog& log = read.streams.front();
        const auto id = [&](const SignatureHit& h) {
            return QStringLiteral("%1:%2").arg(set.signatures()[h.rule].id).arg(h.line);
        };
        QSet<QString> fromLog, fromText;
        QSet<QString> inOnePass; // the log's lines read as the text they lie in
        for (const SignatureHit& h : set.scanLines(
                 {log.lineCount(), [&log](qsizetype i) { return log.lineBytes(int(i)); }}))
            fromLog.insert(id(h));
        QVERIFY(!log.linesBytes(0, log.lineCount()).isNull());
        for (const SignatureHit& h :
             set.scanLines({log.lineCount(), [&log](qsizetype i) { return log.lineBytes(int(i)); },
                            log.linesBytes(0, log.lineCount())}))
            inOnePass.insert(id(h));
        for (const SignatureHit& h : set.scan(bytes, {}, false))
            fromText.insert(id(h));
        QVERIFY2(fromLog == expected, qPrintable(path));
        QVERIFY2(inOnePass == expected, qPrintable(path));
        QVERIFY2(fromText == expected, qPrintable(path));
    }
    QVERIFY(withHits >= 30); // the corpus exercises the rules, not just empty results
}

// LiteralIndex::candidateLines, line by line and over the joined text, against std::string::find
// on each line (its '\r' before '\n' cut off) for every literal: random lines over an alphabet
// made of the literals' bytes, so that literals overlap, nest, repeat and sit at line ends.
void TestSignatures::literalIndexMatchesFind()
{
    // With a one-byte literal, and without (an exact-case index then looks for each literal at
    // its rarest byte pair).
    const QList<QList<QList<QByteArray>>> ruleSets = {
        {{"abc", "bcd"}, {"c"}, {"abcab", "ca"}, {"dd", "da", "ad"}, {"b c"}, {"cab"}},
        {{"abc", "bcd"}, {"aa"}, {"abcab", "ca"}, {"dd", "da", "ad"}, {"b c"}, {"cab", "ab"}}};
    const QByteArray alphabet = "abcdABCD \r";
    std::mt19937 random(22);
    for (const QList<QList<QByteArray>>& rules : ruleSets)
        for (const bool foldCase : {false, true}) {
            const LiteralIndex index(rules, foldCase);
            for (int round = 0; round < 200; ++round) {
                std::vector<std::string> lines(std::size_t(1 + random() % 40));
                QByteArray text;
                for (std::string& line : lines) {
                    const std::size_t length = random() % 30;
                    for (std::size_t k = 0; k < length; ++k)
                        line += alphabet[qsizetype(random() % std::size_t(alphabet.size()))];
                    text += QByteArray::fromStdString(line);
                    if (&line != &lines.back() || random() % 2) text += '\n';
                }
                // What a log's line is: without its "\n" or "\r\n".
                std::vector<QByteArrayView> views;
                for (qsizetype at = 0;
                     at <= text.size() && qsizetype(views.size()) < qsizetype(lines.size());) {
                    qsizetype end = text.indexOf('\n', at);
                    if (end < 0) end = text.size();
                    qsizetype contentEnd = end;
                    if (contentEnd > at && end < text.size() && text[contentEnd - 1] == '\r')
                        --contentEnd;
                    views.push_back(QByteArrayView(text).sliced(at, contentEnd - at));
                    at = end + 1;
                }
                QCOMPARE(views.size(), lines.size());
                const qsizetype limit = qsizetype(random() % (lines.size() + 2));
                std::vector<std::vector<qsizetype>> expected(std::size_t(rules.size()));
                for (qsizetype l = 0; l < std::min<qsizetype>(limit, qsizetype(views.size()));
                     ++l) {
                    std::string line = views[std::size_t(l)].toByteArray().toStdString();
                    if (foldCase)
                        std::transform(line.begin(), line.end(), line.begin(),
                                       [](unsigned char c) { return char(std::tolower(c)); });
                    for (qsizetype r = 0; r < rules.size(); ++r)
                        for (const QByteArray& literal : rules[r])
                            if (line.find(literal.toStdString()) != std::string::npos) {
                                expected[std::size_t(r)].push_back(l);
                                break;
                            }
                }
                const auto lineAt = [&views](qsizetype i) { return views[std::size_t(i)]; };
                const qsizetype count = qsizetype(views.size());
                QCOMPARE(index.candidateLines({count, lineAt}, limit), expected);
                QCOMPARE(index.candidateLines({count, lineAt, text}, limit), expected);
            }
        }
}

void TestSignatures::newlinesAreCounted()
{
    std::mt19937 random(7);
    for (int round = 0; round < 100; ++round) {
        QByteArray text(qsizetype(random() % 100), 'x');
        for (char& c : text)
            c = "\nab\r"[random() % 4];
        const qsizetype from = text.isEmpty() ? 0 : qsizetype(random() % std::size_t(text.size()));
        const QByteArrayView part = QByteArrayView(text).sliced(from);
        QCOMPARE(countNewlines(part), qsizetype(std::count(part.begin(), part.end(), '\n')));
    }
}

// A leaf's page names the frameworks whose messages lead to it: its own signatures' and, through
// a stage remap, those of the leaf a stage moves there (a NCCL error in DDP's constructor is the
// preparation stage's communication error), then generic messages last.
void TestSignatures::leafPagesNameTheirFrameworks()
{
    const SignatureSet& set = SignatureSet::builtin();
    const QString generic = QLatin1String(SignatureSet::kGenericMessages);
    // No rule names this leaf: NCCL and PyTorch messages reach it through the preparation stage.
    const QStringList prep =
        set.messageFrameworks(QStringLiteral("data-and-model-preparation/communication-error"));
    QVERIFY2(prep.contains(QStringLiteral("NCCL")) && prep.contains(QStringLiteral("PyTorch")),
             qPrintable(prep.join(QLatin1String(", "))));
    // Only the generic AttributeError rule leads here.
    QCOMPARE(set.messageFrameworks(
                 QStringLiteral("training-and-evaluation/program-failure/attribute-not-found")),
             QStringList{generic});
    const QStringList hang = set.messageFrameworks(
        QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
    for (const char* f : {"Horovod", "Megatron-LM", "NCCL", "PyTorch", "TensorFlow"})
        QVERIFY2(hang.contains(QLatin1String(f)), f);
    QVERIFY(!hang.contains(generic) || hang.last() == generic);
    // Every name is a display name, never a rule's lower-case framework key.
    const QSet<QString> lowerCaseNames{QStringLiteral("accelerate"),
                                       QStringLiteral("torchrun/elastic")};
    for (const QString& leaf : leafIds())
        for (const QString& name : set.messageFrameworks(leaf))
            QVERIFY2(name == generic || name.at(0).isUpper() || lowerCaseNames.contains(name),
                     qPrintable(leaf + QLatin1String(": ") + name));
}

QTEST_GUILESS_MAIN(TestSignatures)
#include "tst_signatures.moc"
