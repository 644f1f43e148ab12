#include "report/html_text.h"

#include <gtest/gtest.h>

namespace kforge::report {
namespace {

TEST(EscapeHtml, EscapesMarkupCharacters) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml("</pre><script>alert(1)</script>"),
            "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(EscapeHtml("plain text, tabs\tand\nlines"), "plain text, tabs\tand\nlines");
  EXPECT_EQ(EscapeHtml("&amp;"), "&amp;amp;");  // already-escaped text is text
}

TEST(EscapeHtml, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(EscapeHtml("caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80"),
            "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(EscapeHtml("a\xFF"
                       "b"),
            "a" + fffd + "b");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), fffd + fffd);                       // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), fffd + fffd + fffd);            // a UTF-16 surrogate
  EXPECT_EQ(SanitizeUtf8("\xF4\x90\x80\x80").substr(0, 3), fffd);         // past U+10FFFF
  EXPECT_EQ(SanitizeUtf8("ends in \xE2\x86"), "ends in " + fffd + fffd);  // truncated
  EXPECT_EQ(SanitizeUtf8(std::string("nul\0here", 8)), "nul" + fffd + "here");
  EXPECT_EQ(SanitizeUtf8("bell\x07"), "bell" + fffd);
}

TEST(HtmlId, KeepsOnlySafeCharacters) {
  EXPECT_EQ(HtmlId("c09-abc_DEF"), "c09-abc_DEF");
  EXPECT_EQ(HtmlId("a\"b><c d"), "a_b__c_d");
}

}  // namespace
}  // namespace kforge::report
