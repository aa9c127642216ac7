// qmarg: the command-line tool. main() only assembles the subcommands and
// turns every failure into one line on stderr and a non-zero exit code; what
// each subcommand does lives in its own file.
#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"
#include "qmarg/error.hpp"

int main(int argc, char** argv) {
    CLI::App app{"qmarg: state-vector simulation with fast marginal probabilities over any qubit subset", "qmarg"};
    app.set_version_flag("--version", "qmarg " QMARG_VERSION);
    app.require_subcommand(1);
    qmarg_cli::add_run_command(app);
    qmarg_cli::add_bench_command(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "qmarg: error: %s (see qmarg --help)\n", e.what());
        return 2;
    } catch (const qmarg::Error& e) {
        std::fprintf(stderr, "qmarg: error: %s\n", e.what());
        return 1;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "qmarg: error: out of host memory\n");
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "qmarg: internal error: %s\n", e.what());
        return 3;
    }
    return 0;
}
