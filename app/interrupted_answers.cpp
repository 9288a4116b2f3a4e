#include "app/interrupted_answers.h"

#include <QCoreApplication>
#include <QStringList>

#include <map>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/storage_service.h"

namespace hearth::app {

store::StoreResult<std::vector<InterruptedAnswer>> read_interrupted_answers(store::Store& store) {
  std::vector<InterruptedAnswer> out;
  for (const store::Id id : store.recovered_message_ids()) {
    auto message = store.get_message(id);
    if (!message) {
      if (message.error().code == store::StoreErrorCode::kNotFound) continue;  // purged meanwhile
      return std::move(message).error();
    }
    STORE_ASSIGN_OR_RETURN(const store::Conversation c, store.get_conversation(message->conversation_id));
    if (c.deleted_ms) continue;
    out.push_back({id, c.id, QString::fromStdString(c.title)});
  }
  return out;
}

QString interrupted_answers_html(const std::vector<InterruptedAnswer>& answers) {
  std::map<store::Id, int> per_conversation;
  for (const auto& a : answers) ++per_conversation[a.conversation_id];
  std::map<store::Id, int> seen;
  QStringList links;
  for (const auto& a : answers) {
    QString label = a.title.toHtmlEscaped();
    if (per_conversation[a.conversation_id] > 1) label += QStringLiteral(" (%1)").arg(++seen[a.conversation_id]);
    links << QStringLiteral("<a href=\"%1\">%2</a>").arg(a.message_id).arg(label);
  }
  const int n = static_cast<int>(answers.size());
  return QCoreApplication::translate("hearth::app::Banner",
                                     "%n answer(s) interrupted by the last shutdown were kept: %1.", nullptr, n)
      .arg(links.join(QStringLiteral(", ")));
}

void offer_interrupted_answers(StorageService& storage, Banner& banner, ChatController& controller) {
  storage.run(&banner, QCoreApplication::translate("hearth::app::Banner", "finding the interrupted answers"),
              read_interrupted_answers, [&banner, &controller](std::vector<InterruptedAnswer> answers) {
                if (answers.empty()) return;
                banner.showLinks(interrupted_answers_html(answers),
                                 [&controller](const QString& href) { controller.showMessage(href.toLongLong()); });
              });
}

}  // namespace hearth::app
