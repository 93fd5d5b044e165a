// CLI start-up benchmark: runs `rankscope analyze` on an empty folder, and `rankscope --version`
// (the floor: loading the program), N times each. Prints wall and CPU milliseconds (median and
// fastest); wall includes waiting for a core on a loaded machine, CPU does not.
//   startup_bench [runs, default 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

struct Times {
    std::vector<double> wallMs, cpuMs;
};

double ms(const timeval& t)
{
    return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3;
}

bool runOnce(std::vector<std::string> args, Times& into)
{
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return false;
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return false;
    into.wallMs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    into.cpuMs.push_back(ms(usage.ru_utime) + ms(usage.ru_stime));
    return true;
}

void report(const char* what, Times t)
{
    std::sort(t.wallMs.begin(), t.wallMs.end());
    std::sort(t.cpuMs.begin(), t.cpuMs.end());
    const std::size_t mid = t.wallMs.size() / 2;
    std::printf("%-34s wall %6.1f ms median, %6.1f fastest; CPU %6.1f ms median, %6.1f fastest\n",
                what, t.wallMs[mid], t.wallMs.front(), t.cpuMs[mid], t.cpuMs.front());
}

} // namespace

int main(int argc, char** argv)
{
    const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    const std::filesystem::path empty =
        std::filesystem::temp_directory_path() / ("rankscope-empty-" + std::to_string(::getpid()));
    std::filesystem::create_directories(empty);
    Times analyze, version;
    for (int i = 0; i < runs; ++i) {
        if (!runOnce({RANKSCOPE_BINARY, "analyze", empty.string()}, analyze) ||
            !runOnce({RANKSCOPE_BINARY, "--version"}, version)) {
            std::fprintf(stderr, "startup_bench: %s failed\n", RANKSCOPE_BINARY);
            return 1;
        }
    }
    std::filesystem::remove(empty);
    std::printf("%d runs each of %s\n", runs, RANKSCOPE_BINARY);
    report("analyze EMPTY-FOLDER", analyze);
    report("--version", version);
    return 0;
}
