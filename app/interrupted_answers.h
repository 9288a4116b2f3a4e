// After a crash: the answers the store found still streaming when it opened
// (kept, marked interrupted), offered in the banner with a link to each.
// A click opens the answer's conversation on its branch and the chat view
// scrolls to and highlights it.
#pragma once

#include <QString>

#include <vector>

#include "store/store.h"

namespace hearth::app {

class Banner;
class ChatController;
class StorageService;

struct InterruptedAnswer {
  store::Id message_id = 0;
  store::Id conversation_id = 0;
  QString title;  // the conversation's
};

// Storage thread: the answers Store::open() marked interrupted, oldest first
// (those of conversations deleted since are left out).
store::StoreResult<std::vector<InterruptedAnswer>> read_interrupted_answers(store::Store& store);

// "2 answers interrupted by the last shutdown were kept: <a>Title</a>, <a>Other</a>."
// Each link's href is the answer's message id; a conversation with several
// has them numbered. Titles are escaped.
QString interrupted_answers_html(const std::vector<InterruptedAnswer>& answers);

// Reads them and, if any, shows the banner; a link opens the answer through the controller.
void offer_interrupted_answers(StorageService& storage, Banner& banner, ChatController& controller);

}  // namespace hearth::app
