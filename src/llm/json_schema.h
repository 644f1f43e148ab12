// A validator for the subset of JSON Schema that kforge's structured-output
// stages use: type (one or a list; "integer" is a number without a fraction),
// properties, required, additionalProperties (false or a schema), items,
// enum, const, minimum/maximum, exclusiveMinimum/exclusiveMaximum,
// minItems/maxItems, minLength/maxLength, anyOf. Annotations (description,
// title, default, examples, $schema) are ignored. Any other keyword is
// refused when the schema is checked, so a schema never silently promises a
// rule that is not enforced.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace kforge::llm {

// kBadInput naming the first unsupported keyword or malformed rule.
Status CheckSchema(const nlohmann::json& schema);

// Every violation, each as "<JSON pointer>: <what is wrong>" ("/ideas/2/gain:
// 1.7 is above the maximum 1"); empty when `value` is valid. Assumes a schema
// that passed CheckSchema.
std::vector<std::string> ValidateAgainstSchema(const nlohmann::json& value,
                                               const nlohmann::json& schema);

}  // namespace kforge::llm
