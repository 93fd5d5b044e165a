// Writes the synthetic jobs the digest is measured on, one Kineto trace per rank.
//   digest_bench DIR RANKS MB
//     RANKS traces of about MB each from bench/kinetogen (the PyTorch 2.x args profile); what
//     bench/digest_bench.sh digests with 1 and 2 processes.
//   digest_bench DIR RANKS MB STRAGGLER HUNG
//     a RANKS-rank job of about MB per rank with one straggler and one hung rank
//     (bench/digest_bench_job.h).
#include "digest_bench_job.h"
#include "kinetogen.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv)
{
    if (argc != 4 && argc != 6) {
        std::fprintf(stderr, "usage: digest_bench DIR RANKS MB [STRAGGLER HUNG]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int ranks = std::atoi(argv[2]);
    const double mb = std::atof(argv[3]);
    std::filesystem::create_directories(dir);
    std::int64_t events = 0;
    const auto path = [&](int r) { return dir + "/rank" + std::to_string(r) + ".pt.trace.json"; };
    if (argc == 4) {
        for (int r = 0; r < ranks; ++r)
            events += rankscope::bench::writeSyntheticKineto(path(r), std::int64_t(mb * 1e6), r);
        std::printf("%d ranks, %.0f MB each, %lld events\n", ranks, mb, (long long)events);
        return 0;
    }
    const int straggler = std::atoi(argv[4]), hung = std::atoi(argv[5]);
    const int steps = rankscope::bench::writeDigestJob(dir, ranks, mb, straggler, hung, &events);
    std::printf("%d ranks, %d steps, about %.0f MB each, straggler %d, hung %d, %lld events\n",
                ranks, steps, mb, straggler, hung, (long long)events);
    return 0;
}
