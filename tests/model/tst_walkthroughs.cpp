#include "model/analysis/finding.h"
#include "model/kb/fixrules.h"
#include "model/kb/signatureset.h"
#include "model/kb/taxonomy.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace rankscope;

// The walkthroughs are our own text over the study's fix patterns; these tests hold the data to
// its rules, and prove that the loader's validation catches each kind of breakage.
class TestWalkthroughs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyRecurringPatternHasOne();
    void walkthroughsReferToKnownPatterns();
    void stepsComplete();
    void autoChecks();
    void frameworkSpecifics();
    void lookups();
    void validationCatches_data();
    void validationCatches();
    void fixRulesNameKnownData();
    void fixRulesAgreeWithTheStudy();
    void fixRulesChooseByEvidence();
    void evidencePointsAtAStep();
};

static QByteArray resource(const char* name)
{
    QFile f(QStringLiteral(":/taxonomy/") + QLatin1String(name));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void TestWalkthroughs::everyRecurringPatternHasOne()
{
    const Taxonomy& t = Taxonomy::instance();
    QVERIFY2(t.problems().isEmpty(), qPrintable(t.problems().join(QLatin1Char('\n'))));
    int recurring = 0;
    for (const FixPattern& p : t.fixPatterns()) {
        if (p.count < 2) continue;
        ++recurring;
        QVERIFY2(t.walkthrough(p.id), qPrintable(p.id));
    }
    QCOMPARE(int(t.walkthroughs().size()), recurring);
}

void TestWalkthroughs::walkthroughsReferToKnownPatterns()
{
    const Taxonomy& t = Taxonomy::instance();
    QSet<QString> seen;
    for (const Walkthrough& w : t.walkthroughs()) {
        QVERIFY2(t.fixPattern(w.patternId), qPrintable(w.patternId));
        QVERIFY2(!seen.contains(w.patternId), qPrintable(w.patternId));
        seen.insert(w.patternId);
        QVERIFY(!w.title.isEmpty());
        QVERIFY(!w.summary.isEmpty());
    }
}

void TestWalkthroughs::stepsComplete()
{
    QSet<QString> titles;
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs()) {
        QVERIFY2(!w.steps.empty(), qPrintable(w.patternId));
        QSet<QString> own;
        for (const WalkthroughStep& s : w.steps) {
            const QString where = w.patternId + QStringLiteral(": ") + s.title;
            QVERIFY2(!s.title.isEmpty() && !s.why.isEmpty(), qPrintable(where));
            QVERIFY2(!s.how.isEmpty() || !s.byFramework.empty(), qPrintable(where));
            QVERIFY2(!s.good.isEmpty() && !s.bad.isEmpty(), qPrintable(where));
            QVERIFY2(!own.contains(s.title), qPrintable(where)); // no repeated step
            own.insert(s.title);
        }
    }
}

void TestWalkthroughs::autoChecks()
{
    const Taxonomy& t = Taxonomy::instance();
    QVERIFY(t.autoChecks().size() >= 8);
    QSet<QString> used;
    for (const Walkthrough& w : t.walkthroughs())
        for (const WalkthroughStep& s : w.steps)
            if (!s.autoCheck.isEmpty()) {
                QVERIFY2(t.autoCheck(s.autoCheck), qPrintable(s.autoCheck));
                used.insert(s.autoCheck);
            }
    static const QRegularExpression idRule(QStringLiteral("^[a-z][a-z0-9_]*$"));
    for (const AutoCheck& c : t.autoChecks()) {
        QVERIFY2(idRule.match(c.id).hasMatch(), qPrintable(c.id));
        QVERIFY(!c.description.isEmpty());
        QVERIFY(!c.needs.isEmpty());
        // A check no step points to could never be shown to a user.
        QVERIFY2(used.contains(c.id), qPrintable(c.id));
    }
    for (const char* id :
         {"same_framework_version", "rendezvous_env_consistent", "same_nccl_interface",
          "no_oom_before_hang", "all_ranks_same_step_count"})
        QVERIFY2(t.autoCheck(QLatin1String(id)), id);
    QSet<QString> needed;
    for (const AutoCheck& c : t.autoChecks())
        for (const QString& n : c.needs)
            needed.insert(n);
    for (const CheckFact& f : t.checkFacts()) {
        QVERIFY(!f.description.isEmpty());
        QVERIFY2(needed.contains(f.id), qPrintable(f.id)); // no fact nobody reads
    }
    QVERIFY(t.autoCheck(QStringLiteral("rendezvous_env_consistent"))
                ->needs.contains(QStringLiteral("rank.env.WORLD_SIZE")));
}

void TestWalkthroughs::frameworkSpecifics()
{
    // The most frequent patterns are the ones most users reach; they must say how to do each
    // step per framework where the frameworks differ.
    const Taxonomy& t = Taxonomy::instance();
    for (const char* id : {"fix-communication-configuration", "fix-distributed-api-usage",
                           "fix-device-assignment"}) {
        const Walkthrough* w = t.walkthrough(QLatin1String(id));
        QVERIFY2(w, id);
        QSet<QString> frameworks;
        for (const WalkthroughStep& s : w->steps)
            for (const FrameworkHow& f : s.byFramework)
                frameworks.insert(f.framework);
        QCOMPARE(frameworks, (QSet<QString>{QStringLiteral("pytorch"), QStringLiteral("horovod"),
                                            QStringLiteral("tensorflow")}));
    }
    // Shown in one fixed order whatever the JSON's key order.
    const WalkthroughStep& pin =
        t.walkthrough(QStringLiteral("fix-device-assignment"))->steps.front();
    QCOMPARE(pin.byFramework.size(), size_t(3));
    QCOMPARE(pin.byFramework[0].framework, QStringLiteral("pytorch"));
    QCOMPARE(pin.byFramework[1].framework, QStringLiteral("horovod"));
    QCOMPARE(pin.byFramework[2].framework, QStringLiteral("tensorflow"));
    bool mentionsDebugEnv = false;
    for (const Walkthrough& w : t.walkthroughs())
        for (const WalkthroughStep& s : w.steps)
            mentionsDebugEnv |= s.how.contains(QLatin1String("NCCL_DEBUG=INFO")) &&
                                w.patternId == QLatin1String("fix-network-setting");
    QVERIFY(mentionsDebugEnv);
}

void TestWalkthroughs::lookups()
{
    const Taxonomy& t = Taxonomy::instance();
    QVERIFY(!t.walkthrough(QStringLiteral("no-such-pattern")));
    QVERIFY(!t.autoCheck(QStringLiteral("no_such_check")));
    // A leaf's walkthroughs follow its fix patterns by frequency.
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const std::vector<const Walkthrough*> forHang = t.walkthroughsForNode(hang);
    QVERIFY(!forHang.empty());
    int last = INT_MAX;
    for (const Walkthrough* w : forHang) {
        int count = 0;
        for (const KeyCount& k : t.node(hang)->fixPatterns)
            if (k.key == w->patternId) count = k.count;
        QVERIFY(count > 0 && count <= last);
        last = count;
    }
    QVERIFY(t.walkthroughsForNode(QStringLiteral("no/such")).empty());
    // A pattern seen once has no walkthrough, by the rule.
    const FixPattern* once = t.fixPattern(QStringLiteral("use-tmux"));
    QVERIFY(once);
    QCOMPARE(once->count, 1);
    QVERIFY(!t.walkthrough(once->id));
}

void TestWalkthroughs::validationCatches_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("problem");
    const QByteArray check = R"({"id": "c1", "description": "d", "needs": ["x"]})";
    const QByteArray facts = R"("facts": [{"id": "x", "description": "d"}], )";
    const QByteArray step = R"({"title": "t", "why": "w", "how": "h", "good": "g", "bad": "b"})";
    QTest::addRow("not json") << QByteArray("{") << QStringLiteral("walkthroughs:");
    QTest::addRow("unknown pattern")
        << QByteArray(R"({"auto_checks": [], "walkthroughs": [{"pattern": "nope", "title": "x",
                      "steps": [)" +
                      step + "]}]}")
        << QStringLiteral("walkthrough of unknown pattern 'nope'");
    QTest::addRow("no steps")
        << QByteArray(R"({"walkthroughs": [{"pattern": "fix-network-setting", "title": "x",
                      "steps": []}]})")
        << QStringLiteral("walkthrough 'fix-network-setting' lacks a title or steps");
    QTest::addRow("incomplete step")
        << QByteArray(R"({"walkthroughs": [{"pattern": "fix-network-setting", "title": "x",
                      "steps": [{"title": "t"}]}]})")
        << QStringLiteral("walkthrough 'fix-network-setting' step 1 lacks");
    QTest::addRow("unknown auto check") << QByteArray("{" + facts + R"("auto_checks": [)" + check +
                                                      R"(], "walkthroughs": [{"pattern":
                      "fix-network-setting", "title": "x", "steps": [{"title": "t", "why": "w",
                      "how": "h", "good": "g", "bad": "b", "auto_check": "c2"}]}]})")
                                        << QStringLiteral("uses unknown auto check 'c2'");
    QTest::addRow("unknown framework")
        << QByteArray(R"({"walkthroughs": [{"pattern": "fix-network-setting", "title": "x",
                      "steps": [{"title": "t", "why": "w", "by_framework": {"jax": "j"},
                      "good": "g", "bad": "b"}]}]})")
        << QStringLiteral("unknown framework 'jax'");
    QTest::addRow("missing walkthrough")
        << QByteArray(R"({"auto_checks": [], "walkthroughs": []})")
        << QStringLiteral("pattern 'fix-dependency-version' (82 rows) has no walkthrough");
    QTest::addRow("unknown fact")
        << QByteArray(R"({"facts": [{"id": "y", "description": "d"}], "auto_checks": [)" + check +
                      R"(], "walkthroughs": []})")
        << QStringLiteral("auto check 'c1' needs unknown fact 'x'");
    QTest::addRow("duplicate check") << QByteArray("{" + facts + R"("auto_checks": [)" + check +
                                                   "," + check + R"(], "walkthroughs": []})")
                                     << QStringLiteral("auto check 'c1' twice");
}

void TestWalkthroughs::validationCatches()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, problem);
    const Taxonomy t =
        Taxonomy::fromData(resource("tosem23_faults.csv"), resource("tosem23_howto.csv"),
                           resource("descriptions.json"), json);
    bool found = false;
    for (const QString& p : t.problems())
        found |= p.contains(problem);
    QVERIFY2(found, qPrintable(t.problems().join(QLatin1Char('\n'))));
}

// Every fix pattern, leaf, finding kind, condition and signature a rule of taxonomy/fix_rules.json
// names exists, read from the file itself rather than through the parser.
void TestWalkthroughs::fixRulesNameKnownData()
{
    const Taxonomy& t = Taxonomy::instance();
    const QJsonObject doc = QJsonDocument::fromJson(resource("fix_rules.json")).object();
    const QJsonObject conditions = doc.value(QStringLiteral("conditions")).toObject();
    const QJsonArray rules = doc.value(QStringLiteral("rules")).toArray();
    QVERIFY(rules.size() >= 10);
    QCOMPARE(qsizetype(FixRuleBook::builtin().rules().size()), qsizetype(rules.size()));
    QSet<QString> signatures;
    for (const Signature& s : SignatureSet::builtin().signatures())
        signatures.insert(s.id);
    QSet<QString> ids;
    for (const QJsonValue& v : rules) {
        const QJsonObject r = v.toObject();
        const QString id = r.value(QStringLiteral("id")).toString();
        QVERIFY2(!id.isEmpty() && !ids.contains(id), qPrintable(id));
        ids.insert(id);
        QVERIFY2(!r.value(QStringLiteral("reason")).toString().isEmpty(), qPrintable(id));
        const QJsonArray tiers = r.value(QStringLiteral("fixes")).toArray();
        QVERIFY2(!tiers.isEmpty(), qPrintable(id));
        for (const QJsonValue& tier : tiers)
            for (const QJsonValue& p : tier.toArray()) {
                QVERIFY2(t.fixPattern(p.toString()),
                         qPrintable(id + QLatin1Char(' ') + p.toString()));
                QVERIFY2(t.walkthrough(p.toString()),
                         qPrintable(id + QLatin1Char(' ') + p.toString()));
            }
        for (const QJsonValue& leaf : r.value(QStringLiteral("symptoms")).toArray())
            QVERIFY2(t.isLeafId(leaf.toString()),
                     qPrintable(id + QLatin1Char(' ') + leaf.toString()));
        for (const QJsonValue& kind : r.value(QStringLiteral("kinds")).toArray())
            QVERIFY2(findingKindFromName(kind.toString().toStdString()),
                     qPrintable(id + QLatin1Char(' ') + kind.toString()));
        for (const QJsonValue& c : r.value(QStringLiteral("when")).toArray()) {
            const QString condition = c.toString();
            if (condition.startsWith(QLatin1String("signature:")))
                QVERIFY2(signatures.contains(condition.mid(10)), qPrintable(condition));
            else
                QVERIFY2(conditions.contains(condition), qPrintable(condition));
        }
    }
}

// Reviewed against the study's labels: a rule for a leaf puts first a fix the study records
// for that leaf (counted from the CSV here), so the evidence reorders the study, never
// replaces it with a fix nobody used for that symptom.
void TestWalkthroughs::fixRulesAgreeWithTheStudy()
{
    const Taxonomy& t = Taxonomy::instance();
    const QJsonArray rules = QJsonDocument::fromJson(resource("fix_rules.json"))
                                 .object()
                                 .value(QStringLiteral("rules"))
                                 .toArray();
    for (const QJsonValue& v : rules) {
        const QJsonObject r = v.toObject();
        const QStringList first =
            r.value(QStringLiteral("fixes")).toArray().first().toVariant().toStringList();
        for (const QJsonValue& leaf : r.value(QStringLiteral("symptoms")).toArray()) {
            const TaxonomyNode* node = t.node(leaf.toString());
            QVERIFY(node);
            bool used = false;
            for (const KeyCount& k : node->fixPatterns)
                used = used || first.contains(k.key);
            QVERIFY2(used, qPrintable(r.value(QStringLiteral("id")).toString()));
        }
    }
}

void TestWalkthroughs::fixRulesChooseByEvidence()
{
    const Taxonomy& t = Taxonomy::instance();
    const FixRuleBook& book = FixRuleBook::builtin();
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QHash<QString, QString> values = {
        {QStringLiteral("ranks"), QStringLiteral("rank 1")},
        {QStringLiteral("where"), QStringLiteral("all_reduce #9")}};
    // A rank that never issued the collective: its own logic first, not the study's most
    // frequent fix for hangs (the communication configuration).
    const FixChoice never =
        book.choose(t, QStringLiteral("hang"), hang, {QStringLiteral("never_issued")}, values);
    QCOMPARE(never.patternIds.value(0), QStringLiteral("fix-behavior-logic"));
    QVERIFY2(never.reason.contains(QLatin1String("rank 1 never issued all_reduce #9")),
             qPrintable(never.reason));
    QVERIFY(!never.reason.contains(QLatin1Char('{')));
    // An op mismatch is never offered data-type or loss-function fixes.
    const FixChoice op =
        book.choose(t, QStringLiteral("collective_mismatch"),
                    QStringLiteral("training-and-evaluation/program-failure/tensor-mismatch"),
                    {QStringLiteral("op_mismatch")}, values);
    QCOMPARE(op.patternIds.value(0), QStringLiteral("fix-behavior-logic"));
    QVERIFY(!op.patternIds.contains(QStringLiteral("fix-data-type")));
    QVERIFY(!op.patternIds.contains(QStringLiteral("fix-loss-function")));
    // Two ranks on one GPU fail the group's set-up like a wrong address would, but the fix is
    // the device each rank pins, not the rendezvous settings the other set-up failures get.
    const QString setup = QStringLiteral("communication-setup/setup-failure");
    const FixChoice duplicate =
        book.choose(t, QStringLiteral("crash"), setup,
                    {QStringLiteral("signature:torch.duplicate-gpu")}, values);
    QCOMPARE(duplicate.patternIds.value(0), QStringLiteral("fix-device-assignment"));
    const FixChoice rendezvous = book.choose(t, QStringLiteral("setup_failure"), setup, {}, values);
    QCOMPARE(rendezvous.patternIds.value(0), QStringLiteral("fix-communication-configuration"));
    // A backend the build lacks is a set-up failure too, fixed by the backend chosen or the
    // build installed, not by the rendezvous settings.
    const FixChoice backend =
        book.choose(t, QStringLiteral("setup_failure"), setup,
                    {QStringLiteral("signature:torch.unknown-backend")}, values);
    QCOMPARE(backend.patternIds, (QStringList{QStringLiteral("fix-communication-configuration"),
                                              QStringLiteral("fix-framework-installation")}));
    QVERIFY2(backend.reason.contains(QLatin1String("backend")), qPrintable(backend.reason));
    // NCCL's failed CUDA call is a communication error whose first fix is the versions, not the
    // distributed API usage that resolved most communication errors in the study.
    const QString communication =
        QStringLiteral("training-and-evaluation/program-failure/communication-error");
    const FixChoice cudaCall =
        book.choose(t, QStringLiteral("crash"), communication,
                    {QStringLiteral("signature:nccl.unhandled-cuda")}, values);
    QCOMPARE(cudaCall.patternIds.value(0), QStringLiteral("fix-framework-version"));
    QCOMPARE(book.choose(t, QStringLiteral("crash"), communication, {}, values).patternIds.value(0),
             QStringLiteral("fix-distributed-api-usage"));
    // No rule: the study's most frequent fix for the leaf, and the reason says so.
    const TaxonomyNode* node = t.node(hang);
    QVERIFY(node && !node->fixPatterns.empty());
    const FixChoice plain = book.choose(t, QStringLiteral("hang"), hang, {}, values);
    QVERIFY(plain.ruleId.isEmpty());
    QCOMPARE(plain.patternIds.value(0), node->fixPatterns.front().key);
    QVERIFY(plain.reason.contains(node->name));
}

// The step a finding's evidence points at: the first whose auto-check found its problem, else
// the one whose title shares two telling words with the finding's why and more than any other.
void TestWalkthroughs::evidencePointsAtAStep()
{
    const auto step = [](const char* title, const char* check = "") {
        WalkthroughStep s;
        s.title = QString::fromUtf8(title);
        s.autoCheck = QString::fromUtf8(check);
        return s;
    };
    Walkthrough w;
    w.patternId = QStringLiteral("fix-test");
    w.steps = {step("Check the rank's initialisation order"),
               step("Make every rank issue the same collectives", "same_sequence"),
               step("Handle unused parameters and uneven inputs")};
    // Ten more titles that say "rank" and "check", as the real book's many do: those two words
    // tell no step from another.
    std::vector<Walkthrough> book{w, Walkthrough{}};
    for (int i = 0; i < 10; ++i)
        book.back().steps.push_back(step("Check the rank"));
    const QString unused = QStringLiteral("DDP saw parameters that took no part in the loss: use "
                                          "them, or pass find_unused_parameters=True.");
    QCOMPARE(stepForEvidence(w, {}, unused, book), 2);
    // A failed check found its step's problem in the folder: that step comes first.
    QCOMPARE(stepForEvidence(w, {QStringLiteral("same_sequence")}, unused, book), 1);
    QCOMPARE(stepForEvidence(w, {QStringLiteral("other_check")}, unused, book), 2);
    // One shared word is not enough, nor words many titles have, nor a tie.
    QCOMPARE(stepForEvidence(w, {}, QStringLiteral("some parameters were lost"), book), -1);
    QCOMPARE(stepForEvidence(w, {}, QStringLiteral("check the rank's rank"), book), -1);
    QCOMPARE(stepForEvidence(w, {}, QStringLiteral("initialisation order, uneven inputs"), book),
             -1);
    QCOMPARE(stepForEvidence(w, {}, QString(), book), -1);
}

QTEST_GUILESS_MAIN(TestWalkthroughs)
#include "tst_walkthroughs.moc"
