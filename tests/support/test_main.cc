// The single Boost.Test main for every locus test executable.
#define BOOST_TEST_MODULE locus
#include <boost/test/unit_test.hpp>
