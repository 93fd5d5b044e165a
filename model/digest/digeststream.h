#pragma once

#include "model/store/eventstore.h"

#include <QDataStream>

namespace rankscope::Digest {

// How a digest holds a collective record: every field (CollectiveRecord::forEachField) as a
// qint64, in the record's order.
void putCollective(QDataStream& s, const CollectiveRecord& c);
// Reads what putCollective wrote into `c`; on a short stream, s.status() says so.
void getCollective(QDataStream& s, CollectiveRecord& c);

} // namespace rankscope::Digest
