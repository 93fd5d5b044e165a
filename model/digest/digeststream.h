#pragma once

#include "model/store/eventstore.h"

#include <QDataStream>

namespace rankscope::Digest {

// How a digest holds a store's parts. A collective record: every field
// (CollectiveRecord::forEachField) as a qint64, in the record's order.
void putCollective(QDataStream& s, const CollectiveRecord& c);
// Reads what putCollective wrote into `c`; on a short stream, s.status() says so.
void getCollective(QDataStream& s, CollectiveRecord& c);
// A lane: its header fields (Lane::forEachHeaderField) as putCollective writes fields (strings
// as bytes), its starts as deltas and ends as durations, its event columns
// (Lane::forEachEventColumn) and `unfinished`, each column as its size and its values.
void putLane(QDataStream& s, const Lane& l);
// Reads what putLane wrote into `l`; on a short stream, s.status() says so.
void getLane(QDataStream& s, Lane& l);
// A flow: every field (FlowLink::forEachField) as a qint64, in the flow's order.
void putFlow(QDataStream& s, const FlowLink& f);
void getFlow(QDataStream& s, FlowLink& f);

} // namespace rankscope::Digest
