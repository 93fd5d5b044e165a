#pragma once

// Writes protocol-2 pickles the way the two Flight Recorder writers do, for tests that need dumps
// too large to keep as files. Python's pickler (torch's Python-side dumps, make_dumps.py) memoizes
// every string and container (BINPUT, BINGET for a repeat) and fills lists and dicts in batches of
// 1000 (MARK ... APPENDS / SETITEMS; one item: APPEND / SETITEM); torch's C++ pickler fills each
// container in one batch. `batch` chooses: 1000 for Python's, 0 for one batch.

#include <QByteArray>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rankscope::test {

class PickleWriter {
public:
    explicit PickleWriter(int batch = 1000) : m_batch(batch) { m_out = QByteArray("\x80\x02", 2); }

    void string(const std::string& s)
    {
        if (const auto it = m_strings.find(s); it != m_strings.end()) {
            get(it->second);
            return;
        }
        m_out += 'X';
        le32(std::uint32_t(s.size()));
        m_out.append(s.data(), qsizetype(s.size()));
        m_strings[s] = put();
    }
    void integer(std::int32_t v)
    {
        m_out += 'J';
        le32(std::uint32_t(v));
    }
    void boolean(bool v) { m_out += char(v ? 0x88 : 0x89); }

    // A container of `n` items: begin, then per item its value (a dict: its key, then its value)
    // each followed by item(), then end(). Python's batching needs the count up front.
    void beginList(int n) { begin(']', n); }
    void beginDict(int n) { begin('}', n); }
    void item()
    {
        Open& o = m_open.back();
        ++o.written;
        if (o.n == 1) return; // APPEND / SETITEM at end()
        if (m_batch > 0 && o.written % m_batch == 0 && o.written < o.n) {
            m_out += o.list ? 'e' : 'u';
            m_out += '(';
        }
    }
    void end()
    {
        const Open o = m_open.back();
        m_open.pop_back();
        if (o.n == 0) return;
        if (o.n == 1) {
            m_out += o.list ? 'a' : 's';
            return;
        }
        m_out += o.list ? 'e' : 'u';
    }
    // The pickle, with its STOP opcode.
    QByteArray finish() const { return m_out + '.'; }

private:
    struct Open {
        bool list;
        int n;
        int written = 0;
    };
    void begin(char op, int n)
    {
        m_out += op;
        put();
        if (n > 1) m_out += '(';
        m_open.push_back({op == ']', n});
    }
    std::uint32_t put()
    {
        const std::uint32_t index = m_next++;
        if (index < 256) {
            m_out += 'q';
            m_out += char(index);
        } else {
            m_out += 'r';
            le32(index);
        }
        return index;
    }
    void get(std::uint32_t index)
    {
        if (index < 256) {
            m_out += 'h';
            m_out += char(index);
        } else {
            m_out += 'j';
            le32(index);
        }
    }
    void le32(std::uint32_t v)
    {
        for (int k = 0; k < 4; ++k)
            m_out += char((v >> (8 * k)) & 0xff);
    }

    int m_batch;
    QByteArray m_out;
    std::map<std::string, std::uint32_t> m_strings;
    std::uint32_t m_next = 0;
    std::vector<Open> m_open;
};

// A Flight Recorder dump of `entries` all_reduce entries (record_id and collective_seq_id 1..n,
// each with one stack frame), its pg_config and version before them, as torch orders its keys.
inline QByteArray flightRecorderPickle(int entries, int batch)
{
    PickleWriter w(batch);
    w.beginDict(3);
    w.string("version");
    w.string("2.5");
    w.item();
    w.string("pg_config");
    w.beginDict(1);
    w.string("0");
    w.beginDict(3);
    for (const auto& [k, v] :
         {std::pair{"name", "0"}, std::pair{"desc", "default_pg"}, std::pair{"ranks", "[0, 1]"}}) {
        w.string(k);
        w.string(v);
        w.item();
    }
    w.end();
    w.item();
    w.end();
    w.item();
    w.string("entries");
    w.beginList(entries);
    for (int i = 1; i <= entries; ++i) {
        w.beginDict(6);
        w.string("record_id");
        w.integer(i);
        w.item();
        w.string("collective_seq_id");
        w.integer(i);
        w.item();
        w.string("profiling_name");
        w.string("nccl:all_reduce");
        w.item();
        w.string("state");
        w.string("completed");
        w.item();
        w.string("retired");
        w.boolean(true);
        w.item();
        w.string("frames");
        w.beginList(1);
        w.beginDict(3);
        w.string("name");
        w.string("train_step");
        w.item();
        w.string("filename");
        w.string("train.py");
        w.item();
        w.string("line");
        w.integer(i % 1000);
        w.item();
        w.end();
        w.item();
        w.end();
        w.item();
        w.end();
        w.item();
    }
    w.end();
    w.item();
    w.end();
    return w.finish();
}

} // namespace rankscope::test
