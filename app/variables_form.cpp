#include "app/variables_form.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/chat_controller.h"

namespace hearth::app {

VariablesForm::VariablesForm(const QString& prompt, const QStringList& names, const QVariantMap& remembered,
                             QWidget* parent)
    : QDialog(parent) {
  setObjectName(QStringLiteral("variablesForm"));
  setWindowTitle(tr("Fill in the prompt"));
  auto* intro = new QLabel(tr("The prompt %1 has variables. Their values go into this answer's system prompt and "
                              "are recorded with it; later messages reuse them.")
                               .arg(prompt),
                           this);
  intro->setWordWrap(true);
  auto* form = new QFormLayout;
  for (const QString& name : names) {
    auto* edit = new QLineEdit(remembered.value(name).toString(), this);
    edit->setObjectName(QStringLiteral("variable_%1").arg(name));
    form->addRow(QStringLiteral("{{%1}}").arg(name), edit);
    fields_[name] = edit;
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  QPushButton* send = buttons->addButton(tr("Send"), QDialogButtonBox::AcceptRole);
  send->setObjectName(QStringLiteral("variablesSend"));
  send->setDefault(true);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(intro);
  layout->addLayout(form);
  layout->addWidget(buttons);
}

QLineEdit* VariablesForm::field(const QString& name) const {
  const auto it = fields_.find(name);
  return it == fields_.end() ? nullptr : it->second;
}

std::map<std::string, std::string> VariablesForm::values() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, edit] : fields_) out[name.toStdString()] = edit->text().toStdString();
  return out;
}

void ask_for_variables(QWidget* parent, ChatController* controller, const QString& text, const QString& prompt,
                       const QStringList& names, const QVariantMap& remembered) {
  auto* form = new VariablesForm(prompt, names, remembered, parent);
  form->setAttribute(Qt::WA_DeleteOnClose);
  QObject::connect(form, &QDialog::accepted, controller,
                   [form, controller, text] { controller->sendWithVariables(text, form->values()); });
  QObject::connect(form, &QDialog::rejected, controller, [controller, text] { controller->cancelVariables(text); });
  form->open();
}

}  // namespace hearth::app
