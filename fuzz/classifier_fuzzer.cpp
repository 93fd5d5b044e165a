// libFuzzer harness for the symptom classifier (what `rankscope classify` and every log's triage
// run): any text, as a report and as a log, must give well-formed candidates, never a crash.
#include "model/kb/symptomclassifier.h"

#include <cstdlib>

using namespace rankscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray text(reinterpret_cast<const char*>(data), qsizetype(size));
    for (const bool useCues : {true, false}) {
        SymptomClassifier::Options options;
        options.useCues = useCues;
        const QList<Candidate> candidates = SymptomClassifier::instance().classify(text, options);
        if (candidates.size() > options.maxCandidates) std::abort();
        for (const Candidate& c : candidates) {
            if (c.symptom.isEmpty() || !(c.score >= 0.0 && c.score <= 1.0)) std::abort();
            if (c.evidence.size() > options.maxEvidence) std::abort();
        }
    }
    return 0;
}
