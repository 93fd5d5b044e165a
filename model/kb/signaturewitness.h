#pragma once

namespace rankscope {

// What a root log line says its rank saw of another rank, when that is all the line says
// (taxonomy/signatures.json's "witness"): the analysis reads such a line as testimony about a
// peer, never as the failure of the rank that printed it. Plain C++, so that the analysis's
// evidence can carry it without the knowledge base's Qt types.
enum class SignatureWitness {
    None,               // the line is its own rank's failure (or a training hang, or a cascade)
    PeerFailure,        // a peer closed or reset the connection: another rank died or exited
    CollectiveMismatch, // a peer's message has another size than the rank's own call posted,
                        // and the line does not say whose call deviates
    CollectiveWait,     // the rank timed out inside a collective its peers did not complete: a
                        // wait for them, whichever stage the collective belongs to
};

} // namespace rankscope
