#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <vector>

namespace rankscope {

// A fact about a loaded folder that auto-checks read; the analysis provides them.
struct CheckFact {
    QString id; // e.g. "rank.nccl.net_interface"
    QString description;
};

// A check the analysis can evaluate on a loaded folder; `needs` names the facts it reads
// (e.g. "rank.torch_version", "rank.env.MASTER_ADDR"), so the analysis knows when it cannot decide.
struct AutoCheck {
    QString id;
    QString description;
    QStringList needs;
};

// Framework-specific instructions of a step ("pytorch", "horovod", "tensorflow").
struct FrameworkHow {
    QString framework;
    QString how;
};

struct WalkthroughStep {
    QString title;
    QString why;
    QString how; // applies to every framework; byFramework adds or replaces per framework
    std::vector<FrameworkHow> byFramework;
    QString good;      // what a good result looks like
    QString bad;       // what a bad result looks like, and what it means
    QString autoCheck; // an AutoCheck id, or empty
};

// The guided checklist of one fix pattern, in the order to work through it.
struct Walkthrough {
    QString patternId;
    QString title;
    QString summary;
    std::vector<WalkthroughStep> steps;
};

// The parsed taxonomy/walkthroughs.json: the facts, the auto-check vocabulary over them, and the
// walkthroughs.
struct WalkthroughBook {
    std::vector<CheckFact> facts;
    std::vector<AutoCheck> autoChecks;
    std::vector<Walkthrough> walkthroughs;

    // Parses the document; on a malformed one returns an empty book and sets *error.
    static WalkthroughBook parse(const QByteArray& json, QString* error);
};

// The step of `w` that a finding's evidence points at, or -1 when none stands out: the first
// step whose auto-check found the problem it addresses (its id in `failedChecks`), else the
// step whose title shares with `reason` (the finding's why) at least two telling words and more
// than any other step's title does. A word tells only if some title of `w` lacks it and at most
// a tenth of the titles in `book` have it ("rank", "every" and "check" are in many).
int stepForEvidence(const Walkthrough& w, const QStringList& failedChecks, const QString& reason,
                    const std::vector<Walkthrough>& book);

} // namespace rankscope
