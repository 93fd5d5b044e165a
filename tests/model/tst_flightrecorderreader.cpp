#include "model/trace/flightrecorderreader.h"
#include "model/trace/tracefolder.h"
#include "model/tracesession.h"
#include "tests/support/findings.h"
#include "tests/support/fuzzinputs.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace rankscope;

class TestFlightRecorderReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fuzzRegressions_data();
    void fuzzRegressions();
    void dumps_data();
    void dumps();
    void collectiveRecords();
    void statesAsWritten_data();
    void statesAsWritten();
    void badDumps_data();
    void badDumps();
    void rankFromFileName_data();
    void rankFromFileName();
    void sessionKeepsOtherFiles();
    void coalescedBlocksAreOneCollective_data();
    void coalescedBlocksAreOneCollective();
    void sharedSeqWithoutEndEntryIsNoBlock();
    void scenarios_data();
    void scenarios();
    void absentRankIsNoCulprit_data();
    void absentRankIsNoCulprit();
    void pointToPointRanksAreTheGroups_data();
    void pointToPointRanksAreTheGroups();
    void aRankWaitingInAnotherGroupIsNoCulprit_data();
    void aRankWaitingInAnotherGroupIsNoCulprit();
};

static QString frDir()
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/flight_recorder/");
}

// The two forms torch writes a dump in, as the `form` column of a data-driven test.
static void addDumpForms()
{
    QTest::addColumn<QString>("form");
    QTest::newRow("pickle") << QStringLiteral("pickle");
    QTest::newRow("json") << QStringLiteral("json");
}

static QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void TestFlightRecorderReader::dumps_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("entries");
    QTest::addColumn<bool>("frames");
    QTest::newRow("pickle protocol 2") << "nccl_trace_rank_0" << 0 << 4 << true;
    QTest::newRow("pickle protocol 4") << "nccl_trace_rank_1" << 1 << 2 << true;
    QTest::newRow("json") << "fr_json_rank_0.json" << 0 << 4 << false;
}

void TestFlightRecorderReader::dumps()
{
    QFETCH(QString, file);
    QFETCH(int, rank);
    QFETCH(int, entries);
    QFETCH(bool, frames);
    QString error;
    // The JSON form is named with an extension, so its rank comes from the name pattern.
    const auto dump = FlightRecorderReader::read(readFile(frDir() + file), file, &error);
    QVERIFY2(dump, qPrintable(error));
    QCOMPARE(dump->rank.value_or(-1), file.endsWith(QLatin1String(".json")) ? -1 : rank);
    QCOMPARE(dump->version, std::string("2.5"));
    QCOMPARE(dump->commLibVersion, std::string("2.21.5"));
    QCOMPARE(int(dump->entries.size()), entries);
    QCOMPARE(dump->groupRanks("0"), (std::vector<int>{0, 1}));
    QVERIFY(dump->pgStatus.contains("0"));
    const FlightRecorderEntry& first = dump->entries.front();
    QCOMPARE(first.recordId, std::int64_t(1));
    QCOMPARE(first.pgName, std::string("0"));
    QCOMPARE(first.pgDesc, std::string("default_pg"));
    QCOMPARE(first.collectiveSeqId, std::int64_t(1));
    QCOMPARE(first.op, std::string("all_reduce"));
    QCOMPARE(first.inputSizes, (std::vector<std::vector<std::int64_t>>{{6792}}));
    QCOMPARE(first.inputDtypes, (std::vector<std::string>{"Float"}));
    QCOMPARE(first.state, FlightRecorderEntry::State::Completed);
    QVERIFY(first.timeCompletedNs > first.timeStartedNs);
    QCOMPARE(first.timeoutMs, std::int64_t(600000));
    QCOMPARE(first.frames.empty(), !frames);
    if (frames) QCOMPARE(first.frames[1].line, 87 + rank);
    if (rank == 0) {
        const FlightRecorderEntry& stuck = dump->entries[2];
        QCOMPARE(stuck.collectiveSeqId, std::int64_t(3));
        QVERIFY(stuck.timedOut());
        QCOMPARE(stuck.timeCompletedNs, std::int64_t(-1)); // None in pickles, 0 in JSON
        const FlightRecorderEntry& send = dump->entries[3];
        QVERIFY(send.isP2p);
        QCOMPARE(send.op, std::string("send"));
        QCOMPARE(send.p2pPeer, 1);
        QCOMPARE(send.p2pSeqId, std::int64_t(1));
        QCOMPARE(send.inputDtypes, (std::vector<std::string>{"BFloat16"}));
    }
}

void TestFlightRecorderReader::collectiveRecords()
{
    QString error;
    auto dump = FlightRecorderReader::read(readFile(frDir() + QStringLiteral("nccl_trace_rank_0")),
                                           QStringLiteral("nccl_trace_rank_0"), &error);
    QVERIFY(dump);
    dump->sourceIndex = 7;
    EventStore store;
    FlightRecorderReader::appendCollectives(*dump, store);
    QCOMPARE(store.collectives.size(), std::size_t(4));
    const CollectiveRecord& c = store.collectives[2];
    QCOMPARE(c.rank, 0);
    QCOMPARE(store.strings.view(c.op), std::string_view("all_reduce"));
    QCOMPARE(store.strings.view(c.processGroupName), std::string_view("0"));
    QCOMPARE(store.strings.view(c.processGroupDesc), std::string_view("default_pg"));
    QCOMPARE(store.rankLists.ranks(c.groupRanks), (std::vector<int>{0, 1}));
    QCOMPARE(c.groupSize, 2);
    QCOMPARE(c.seq, std::int64_t(3));
    QVERIFY(c.seqFromSource);
    QCOMPARE(c.inNelems, std::int64_t(6792));
    QCOMPARE(store.strings.view(c.dtype), std::string_view("Float"));
    QCOMPARE(c.state, CollectiveRecord::State::Started);
    QCOMPARE(c.sourceIndex, 7);
    QCOMPARE(store.collectives[3].seq, std::int64_t(1)); // p2p: its p2p_seq_id
}

// Each state text torch writes is its own state, any other text (a typo, a case change, none)
// is unknown; the matcher takes an unknown entry as issued, since nothing says it ran.
void TestFlightRecorderReader::statesAsWritten_data()
{
    using S = FlightRecorderEntry::State;
    using C = CollectiveRecord::State;
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<S>("state");
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<C>("record");
    QTest::newRow("scheduled") << QByteArray("\"scheduled\"") << S::Scheduled
                               << QByteArray("scheduled") << C::Issued;
    QTest::newRow("started") << QByteArray("\"started\"") << S::Started << QByteArray("started")
                             << C::Started;
    QTest::newRow("completed") << QByteArray("\"completed\"") << S::Completed
                               << QByteArray("completed") << C::Completed;
    QTest::newRow("typo") << QByteArray("\"compleetd\"") << S::Unknown << QByteArray("unknown")
                          << C::Issued;
    QTest::newRow("upper case") << QByteArray("\"COMPLETED\"") << S::Unknown
                                << QByteArray("unknown") << C::Issued;
    QTest::newRow("null") << QByteArray("null") << S::Unknown << QByteArray("unknown") << C::Issued;
}

void TestFlightRecorderReader::statesAsWritten()
{
    QFETCH(QByteArray, text);
    QFETCH(FlightRecorderEntry::State, state);
    QFETCH(QByteArray, name);
    QFETCH(CollectiveRecord::State, record);
    const QByteArray json =
        R"({"version": "2.5", "entries": [{"record_id": 1, "pg_id": 0, "process_group": ["0", "")"
        R"(], "collective_seq_id": 1, "profiling_name": "nccl:all_reduce", "state": )" +
        text + "}]}";
    QString error;
    auto dump = FlightRecorderReader::read(json, QStringLiteral("rank_0"), &error);
    QVERIFY2(dump, qPrintable(error));
    QCOMPARE(dump->entries.size(), std::size_t(1));
    QCOMPARE(dump->entries[0].state, state);
    QCOMPARE(QByteArray(FlightRecorderEntry::stateName(state)), name);
    EventStore store;
    FlightRecorderReader::appendCollectives(*dump, store);
    QCOMPARE(store.collectives.size(), std::size_t(1));
    QCOMPARE(store.collectives[0].state, record);
}

void TestFlightRecorderReader::badDumps_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("says");
    QTest::newRow("forbidden opcode") << "bad/forbidden_global_rank_0"
                                      << "GLOBAL";
    QTest::newRow("truncated pickle") << "bad/truncated_rank_1"
                                      << "truncated";
    QTest::newRow("truncated json") << "bad/truncated_json_rank_0.json"
                                    << "not valid JSON";
}

void TestFlightRecorderReader::badDumps()
{
    QFETCH(QString, file);
    QFETCH(QString, says);
    QString error;
    QVERIFY(!FlightRecorderReader::read(readFile(frDir() + file), file, &error));
    QVERIFY2(error.contains(says), qPrintable(error));
}

void TestFlightRecorderReader::rankFromFileName_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("rank");
    QTest::newRow("default prefix") << "nccl_trace_rank_12" << 12;
    QTest::newRow("custom prefix") << "fr-dump-3" << 3;
    QTest::newRow("extension") << "nccl_trace_rank_1.json" << -1;
    QTest::newRow("no digits") << "dump" << -1;
}

void TestFlightRecorderReader::rankFromFileName()
{
    QFETCH(QString, name);
    QFETCH(int, rank);
    QCOMPARE(FlightRecorderReader::rankFromFileName(name).value_or(-1), rank);
}

// A folder of good and bad dumps: each bad one gets an error, the good ones load.
void TestFlightRecorderReader::sessionKeepsOtherFiles()
{
    const SessionPtr session = loadSession(frDir());
    int ok = 0, errors = 0;
    for (const SourceFile& s : session->folder.sources()) {
        if (s.kind != SourceKind::FlightRecorder) continue;
        QVERIFY(!s.message.isEmpty());
        QVERIFY(!s.message.contains(QLatin1Char('\n')));
        (s.status == SourceStatus::Ok ? ok : errors)++;
    }
    QCOMPARE(ok, 3);
    QCOMPARE(errors, 3);
    QCOMPARE(session->dumps.size(), std::size_t(3));
    QCOMPARE(session->events.collectives.size(), std::size_t(10));
    // Two rank-0 dumps (the pickle and the JSON form) claim one rank.
    QVERIFY(std::any_of(session->warnings.begin(), session->warnings.end(), [](const QString& w) {
        return w.contains(QLatin1String("rank 0")) && w.contains(QLatin1String("flight_recorder"));
    }));
}

// One hand-built 4-rank job per fault kind (tests/data/flight_recorder/make_scenarios.py), in
// pickle and JSON form, through the loader and the analysis: the top finding names the fault.
void TestFlightRecorderReader::scenarios_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<FindingKind>("findingKind");
    QTest::addColumn<Severity>("severity");
    QTest::addColumn<std::vector<int>>("ranks");
    QTest::addColumn<QString>("group");
    QTest::addColumn<qint64>("seq");
    QTest::addColumn<QString>("says");
    QTest::addColumn<bool>("timedOut"); // some entry was retired without completing
    struct Row {
        const char* kind;
        FindingKind findingKind;
        Severity severity;
        std::vector<int> ranks;
        const char* group;
        qint64 seq;
        const char* says;
        bool timedOut;
    };
    const Row rows[] = {
        {"op_type", FindingKind::Desync, Severity::Error, {2}, "0", 3, "broadcast", true},
        {"op_type_completed",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {2},
         "0",
         2,
         "op type mismatch",
         false},
        {"size",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {1},
         "0",
         2,
         "size mismatch",
         true},
        {"dtype",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {3},
         "0",
         4,
         "dtype mismatch",
         true},
        {"missing_rank", FindingKind::Hang, Severity::Error, {2}, "0", 4, "never issued", true},
        {"state",
         FindingKind::Hang,
         Severity::Error,
         {2},
         "0",
         5,
         "completed on some ranks but not on rank 2",
         false},
        {"not_started",
         FindingKind::Hang,
         Severity::Error,
         {2},
         "0",
         5,
         "never started (still scheduled)",
         true},
        {"hang", FindingKind::Hang, Severity::Error, {3}, "0", 3, "pg_status agrees", true},
        {"trimmed", FindingKind::Hang, Severity::Error, {3}, "0", 4, "compared from #2 on", true},
        {"p2p_unpaired",
         FindingKind::Desync,
         Severity::Error,
         {1},
         "0",
         2,
         "has no matching recv on rank 1",
         true},
        {"p2p_size",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {0, 1},
         "0",
         1,
         "size mismatch in send 0->1",
         true},
        {"version",
         FindingKind::ConfigMismatch,
         Severity::Warning,
         {1},
         "",
         -1,
         "version 3.0",
         false},
        {"coalesced_size",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {1},
         "0",
         4,
         "size mismatch in coalesced broadcast #4 (block totals)",
         false},
        {"coalesced_order",
         FindingKind::CollectiveMismatch,
         Severity::Error,
         {2},
         "0",
         4,
         "pairs different tensors: op 1 is broadcast of 8",
         false},
    };
    for (const Row& r : rows)
        for (const char* form : {"pickle", "json"})
            QTest::addRow("%s_%s", r.kind, form)
                << QStringLiteral("%1_%2").arg(QLatin1String(r.kind), QLatin1String(form))
                << r.findingKind << r.severity << r.ranks << QString::fromLatin1(r.group) << r.seq
                << QString::fromLatin1(r.says) << r.timedOut;
}

void TestFlightRecorderReader::scenarios()
{
    QFETCH(QString, kind);
    QFETCH(FindingKind, findingKind);
    QFETCH(Severity, severity);
    QFETCH(std::vector<int>, ranks);
    QFETCH(QString, group);
    QFETCH(qint64, seq);
    QFETCH(QString, says);
    QFETCH(bool, timedOut);
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/") + kind);
    QCOMPARE(session->dumps.size(), std::size_t(4));
    const auto& findings = session->analysis.findings;
    QVERIFY(!findings.empty());
    const Finding& top = findings.front();
    QCOMPARE(top.kind, findingKind);
    QCOMPARE(top.severity, severity);
    QCOMPARE(top.ranks, ranks);
    QCOMPARE(QString::fromStdString(top.processGroup), group);
    QCOMPARE(qint64(top.seq), seq);
    QVERIFY2(QString::fromStdString(top.summary).contains(says), top.summary.c_str());
    // An entry the dump holds as started or scheduled waited for no measured time: its
    // evidence says what the dump recorded, never "not completed after 0 µs" (in any unit).
    for (const Finding& f : findings)
        for (const Evidence& e : f.evidence)
            QVERIFY2(e.text.find("not completed after 0 ") == std::string::npos, e.text.c_str());
    if (kind.startsWith(QLatin1String("p2p_unpaired"))) {
        const auto unpaired =
            std::find_if(top.evidence.begin(), top.evidence.end(), [](const Evidence& e) {
                return e.text.find("send #2") != std::string::npos;
            });
        QVERIFY(unpaired != top.evidence.end());
        // make_scenarios.py leaves rank 0's second send started, with no completion time.
        QVERIFY2(unpaired->text.find("started, not completed in its record") != std::string::npos,
                 unpaired->text.c_str());
    }
    // Dumps of different format versions come from different PyTorch builds: the framework's
    // version is the first fix, with the versions in its reason.
    if (kind.startsWith(QLatin1String("version"))) {
        QVERIFY(!top.fixPatterns.empty());
        QCOMPARE(top.fixPatterns.front(), std::string("fix-framework-version"));
        QVERIFY2(top.fixReason.find("version 3.0") != std::string::npos, top.fixReason.c_str());
    }
    const QStringList contradicting = test::contradictions(session->analysis, session->autoChecks);
    QVERIFY2(contradicting.isEmpty(), qPrintable(contradicting.join(QLatin1Char('\n'))));
    const bool retiredFinding = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
        return f.summary.find("retired without completing") != std::string::npos;
    });
    QCOMPARE(retiredFinding, timedOut);
    // Only the one fault: no other rank is blamed by an error finding.
    for (const Finding& f : findings)
        if (f.severity == Severity::Error)
            for (int r : f.ranks)
                QVERIFY2(std::find(ranks.begin(), ranks.end(), r) != ranks.end(),
                         f.summary.c_str());
}

// Three dumps of a healthy 4-rank group: the rank without a dump is named once and blamed for
// nothing, although the others' entries list it as a member.
void TestFlightRecorderReader::absentRankIsNoCulprit_data()
{
    addDumpForms();
}

void TestFlightRecorderReader::absentRankIsNoCulprit()
{
    QFETCH(QString, form);
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/absent_rank_") + form;
    const SessionPtr session = loadSession(dir);
    QCOMPARE(session->dumps.size(), std::size_t(3));
    // The group's members as the dumps list them, against the ranks that wrote one.
    std::set<int> members, dumped;
    for (const FlightRecorderDump& d : session->dumps)
        dumped.insert(*d.rank);
    for (const CollectiveRecord& c : session->events.collectives)
        for (const int r : session->events.rankLists.ranks(c.groupRanks))
            members.insert(r);
    std::vector<int> absent;
    std::set_difference(members.begin(), members.end(), dumped.begin(), dumped.end(),
                        std::back_inserter(absent));
    QCOMPARE(absent.size(), std::size_t(1));
    int warnings = 0;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        QVERIFY2(std::find(f.ranks.begin(), f.ranks.end(), absent[0]) == f.ranks.end(),
                 f.summary.c_str());
        if (f.kind != FindingKind::MissingRanks) continue;
        ++warnings;
        QVERIFY2(f.summary.find("rank " + std::to_string(absent[0])) != std::string::npos,
                 f.summary.c_str());
    }
    QCOMPARE(warnings, 1);
}

// A slow-path coalescing block (its ops and end entry share a seq), a fast-path
// allreduce_coalesced entry and a batch_isend_irecv ring: no fault, so nothing is blamed.
void TestFlightRecorderReader::coalescedBlocksAreOneCollective_data()
{
    addDumpForms();
}

void TestFlightRecorderReader::coalescedBlocksAreOneCollective()
{
    QFETCH(QString, form);
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/coalesced_ok_") + form);
    QCOMPARE(session->dumps.size(), std::size_t(4));
    for (const Finding& f : session->analysis.findings)
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
    // Per rank: seqs 0-3, the block of seq 4, seq 5, and the ring's send and recv.
    QCOMPARE(session->events.collectives.size(), std::size_t(4 * 8));
    const auto units = FlightRecorderReader::collectiveUnits(session->dumps.front());
    QCOMPARE(units.size(), std::size_t(6));
    QCOMPARE(units[4].ops.size(), std::size_t(2));
    QVERIFY(units[4].end);
    QVERIFY(!units[5].end);
}

// Pipeline stages exchange activations over their own process groups, and ProcessGroupNCCL names
// a p2p entry's ranks by their place in that group (fr_scenarios/p2p_subgroup). The truth, from
// the JSON dumps: each send's and recv's global ranks through its group's sorted members, every
// send paired with a recv. The records carry the peer's global rank, and nothing is blamed.
void TestFlightRecorderReader::pointToPointRanksAreTheGroups_data()
{
    addDumpForms();
}

void TestFlightRecorderReader::pointToPointRanksAreTheGroups()
{
    QFETCH(QString, form);
    const QString root = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/p2p_subgroup_");
    std::multiset<std::pair<int, int>> sends, recvs; // (global from, global to)
    std::map<std::pair<int, int>, int> peerOf;       // (rank, p2p_seq_id) -> global peer
    for (int rank = 0; rank < 4; ++rank) {
        QFile f(root + QStringLiteral("json/nccl_trace_rank_%1.json").arg(rank));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json doc = nlohmann::json::parse(f.readAll().toStdString());
        for (const auto& e : doc["entries"]) {
            if (!e["is_p2p"].get<bool>()) continue;
            const std::string group = e["process_group"][0].get<std::string>();
            std::vector<int> members =
                nlohmann::json::parse(doc["pg_config"][group]["ranks"].get<std::string>())
                    .get<std::vector<int>>();
            std::sort(members.begin(), members.end());
            const std::string name = e["profiling_name"].get<std::string>();
            const bool send = name.find("->") != std::string::npos;
            const std::size_t at = name.find(send ? "->" : "<-");
            const int self = std::stoi(name.substr(name.find(' ') + 1, at));
            const int peer = std::stoi(name.substr(at + 2));
            QCOMPARE(members[std::size_t(self)], rank);
            const int globalPeer = members[std::size_t(peer)];
            (send ? sends : recvs)
                .insert(send ? std::pair{rank, globalPeer} : std::pair{globalPeer, rank});
            peerOf[{rank, e["p2p_seq_id"].get<int>()}] = globalPeer;
        }
    }
    QCOMPARE(sends.size(), std::size_t(4));
    QCOMPARE(sends, recvs);

    const SessionPtr session = loadSession(root + form);
    QVERIFY(session);
    std::size_t p2p = 0;
    for (const CollectiveRecord& c : session->events.collectives) {
        const auto it = peerOf.find({c.rank, int(c.seq)});
        if (session->events.strings.view(c.op) != "send" &&
            session->events.strings.view(c.op) != "recv")
            continue;
        ++p2p;
        QVERIFY(it != peerOf.end());
        QCOMPARE(c.root, it->second);
    }
    QCOMPARE(p2p, sends.size() + recvs.size());
    for (const Finding& f : session->analysis.findings)
        QVERIFY2(f.severity != Severity::Error && f.severity != Severity::Warning,
                 f.summary.c_str());
}

// A rank that waited in another group's op is no culprit. fr_scenarios/tp_dp_stall: rank 3
// stalls before a DP all_reduce that rank 1 then waits in, so rank 1 never issues the TP
// all_reduce rank 0 waits in. pp_stall: rank 0 never sends a pipeline activation that rank 2
// waits to receive, so rank 2 never issues the TP all_reduce rank 3 waits in. The truth, from
// the JSON dumps: per rank, the groups where its newest entry never completed (it waits there)
// and the collectives others started that it lacks (it kept them waiting). The culprit kept
// others waiting and waits nowhere; the waiter kept others waiting only while it waited: no
// error blames it, and the finding that names it says whom it waited for.
void TestFlightRecorderReader::aRankWaitingInAnotherGroupIsNoCulprit_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<int>("culprit");
    QTest::addColumn<int>("waiter");
    for (const char* form : {"json", "pickle"}) {
        QTest::addRow("tp_dp_stall_%s", form)
            << QStringLiteral("tp_dp_stall_") + QLatin1String(form) << 3 << 1;
        QTest::addRow("pp_stall_%s", form)
            << QStringLiteral("pp_stall_") + QLatin1String(form) << 0 << 2;
    }
}

void TestFlightRecorderReader::aRankWaitingInAnotherGroupIsNoCulprit()
{
    QFETCH(QString, scenario);
    QFETCH(int, culprit);
    QFETCH(int, waiter);
    const QString root = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/");
    const QString json =
        root + scenario.left(scenario.lastIndexOf(QLatin1Char('_'))) + QStringLiteral("_json/");
    std::map<int, std::set<std::string>> waitsIn;                   // rank -> groups
    std::map<std::pair<std::string, int>, std::set<int>> startedBy; // (group, seq) -> ranks
    std::map<std::string, std::set<int>> membersOf;
    std::map<int, std::set<std::pair<std::string, int>>> issued;
    for (int rank = 0; rank < 4; ++rank) {
        QFile f(json + QStringLiteral("nccl_trace_rank_%1.json").arg(rank));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json doc = nlohmann::json::parse(f.readAll().toStdString());
        for (const auto& [name, pg] : doc["pg_config"].items())
            for (int m : nlohmann::json::parse(pg["ranks"].get<std::string>()))
                membersOf[name].insert(m);
        std::map<std::string, std::string> newestState;
        for (const auto& e : doc["entries"]) {
            const std::string group = e["process_group"][0].get<std::string>();
            newestState[group] = e["state"].get<std::string>();
            if (e["is_p2p"].get<bool>()) continue;
            const int seq = e["collective_seq_id"].get<int>();
            issued[rank].insert({group, seq});
            if (e["state"] != "completed") startedBy[{group, seq}].insert(rank);
        }
        for (const auto& [group, state] : newestState)
            if (state != "completed") waitsIn[rank].insert(group);
    }
    std::set<int> keptWaiting;
    for (const auto& [key, ranks] : startedBy)
        for (int m : membersOf[key.first])
            if (!issued[m].count(key)) keptWaiting.insert(m);
    QVERIFY(keptWaiting.count(culprit) && keptWaiting.count(waiter));
    QVERIFY(waitsIn[culprit].empty());
    QVERIFY(!waitsIn[waiter].empty());

    const SessionPtr session = loadSession(root + scenario);
    QVERIFY(session);
    bool waiterExplained = false;
    for (const Finding& f : session->analysis.findings) {
        if (f.severity == Severity::Error && !f.ranks.empty())
            QVERIFY2(f.ranks == std::vector<int>{culprit}, f.summary.c_str());
        if (f.ranks == std::vector<int>{waiter})
            waiterExplained =
                waiterExplained ||
                f.summary.find("waiting for rank " + std::to_string(culprit)) != std::string::npos;
    }
    QVERIFY(waiterExplained);
}

// Entries that share a seq form a block only when an end entry closes it or when they are the
// group's newest (a block the job hung inside); a writer that never advances the seq otherwise
// folds every collective into one.
void TestFlightRecorderReader::sharedSeqWithoutEndEntryIsNoBlock()
{
    FlightRecorderDump dump;
    dump.rank = 0;
    const auto add = [&dump](const char* op, std::int64_t seq) {
        FlightRecorderEntry e;
        e.pgName = "0";
        e.op = op;
        e.collectiveSeqId = seq;
        e.inputSizes = {{4}};
        e.outputSizes = {{4}};
        e.state = FlightRecorderEntry::State::Completed;
        dump.entries.push_back(e);
    };
    add("all_reduce", 7); // three collectives under one seq, then the seq moves on: no block
    add("broadcast", 7);
    add("all_reduce", 7);
    add("all_reduce", 8); // a closed block
    add("all_reduce", 8);
    add("nccl:coalesced", 8);
    add("all_gather", 9); // the newest: still open when the job stopped
    add("all_gather", 9);
    const auto units = FlightRecorderReader::collectiveUnits(dump);
    QCOMPARE(units.size(), std::size_t(5));
    for (std::size_t i = 0; i < 3; ++i) {
        QCOMPARE(units[i].ops.size(), std::size_t(1));
        QVERIFY(!units[i].end);
    }
    QCOMPARE(units[3].ops.size(), std::size_t(2));
    QVERIFY(units[3].end);
    QCOMPARE(units[4].ops.size(), std::size_t(2));
    QVERIFY(!units[4].end);

    EventStore store;
    FlightRecorderReader::appendCollectives(dump, store);
    QCOMPARE(store.collectives.size(), std::size_t(5));
    QVERIFY(!store.collectives[0].coalesced);
    QVERIFY(store.collectives[3].coalesced);
    QCOMPARE(store.collectives[3].inNelems, std::int64_t(8));
    QVERIFY(store.collectives[4].coalesced);
}

// Dumps fuzz/run keeps (crashers it found): each gives entries or a one-line error.
void TestFlightRecorderReader::fuzzRegressions_data()
{
    QTest::addColumn<QByteArray>("bytes");
    for (const auto& [name, bytes] : test::fuzzInputs("flightrecorder"))
        QTest::newRow(qPrintable(name)) << bytes;
}

void TestFlightRecorderReader::fuzzRegressions()
{
    QFETCH(QByteArray, bytes);
    QString error;
    const auto dump =
        FlightRecorderReader::read(bytes, QStringLiteral("nccl_trace_rank_3"), &error);
    QVERIFY(dump || (!error.isEmpty() && !error.contains(QLatin1Char('\n'))));
}

QTEST_GUILESS_MAIN(TestFlightRecorderReader)
#include "tst_flightrecorderreader.moc"
