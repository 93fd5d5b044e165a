// Writes the synthetic job bench/digest_bench.sh digests: RANKS Kineto traces of MB each
// (bench/kinetogen, the PyTorch 2.x args profile), one file per rank.
//   digest_bench DIR RANKS MB
#include "kinetogen.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: digest_bench DIR RANKS MB\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int ranks = std::atoi(argv[2]);
    const double mb = std::atof(argv[3]);
    std::filesystem::create_directories(dir);
    std::int64_t events = 0;
    for (int r = 0; r < ranks; ++r)
        events += rankscope::bench::writeSyntheticKineto(
            dir + "/rank" + std::to_string(r) + ".pt.trace.json", std::int64_t(mb * 1e6), r);
    std::printf("%d ranks, %.0f MB each, %lld events\n", ranks, mb, (long long)events);
    return 0;
}
