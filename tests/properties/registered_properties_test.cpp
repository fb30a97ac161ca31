// Registers every property of the suite (property_suite.hpp) as a GoogleTest named after its id,
// so the names `zkpipe soak` prints, the reproduce strings and --gtest_filter all agree.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_suite.hpp"

namespace zkpipe::properties {
namespace {

class RegisteredProperty : public ::testing::Test {
 public:
  explicit RegisteredProperty(const NamedProperty& property) : property_(property) {}
  void TestBody() override { rc::detail::checkGTest(property_.body); }

 private:
  const NamedProperty& property_;
};

const bool registered = [] {
  for (const NamedProperty& property : all_properties()) {
    const auto slash = property.id.find('/');
    ::testing::RegisterTest(property.id.substr(0, slash).c_str(), property.id.substr(slash + 1).c_str(), nullptr,
                            nullptr, __FILE__, __LINE__,
                            [&property]() -> ::testing::Test* { return new RegisteredProperty(property); });
  }
  return true;
}();

}  // namespace
}  // namespace zkpipe::properties
